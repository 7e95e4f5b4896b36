package kube_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/internal/kubetest"
)

// BenchmarkApplyAndWait is one step's work on the test cluster: a
// Deployment of two replicas changed (a new image each time), applied
// and waited on until rolled out. Beside it, on the same object shape in
// the same run: kubectl apply plus kubectl rollout status (what an
// operator would type), and the floor, a server-side apply alone (the
// runner's dry run, apply and reads, without the wait).
//
//	go run ./internal/withcluster -- go test ./executor/kube -run '^$' -bench ApplyAndWait -benchtime 20x
func BenchmarkApplyAndWait(b *testing.B) {
	c := kubetest.Shared(b)
	ns := c.Namespace(b, "bench")
	token := c.Token(b, ns, workloads, nil)
	dial := loopback(b)
	manifest := func(name string, i int) string {
		return strings.NewReplacer("name: web\n", "name: "+name+"\n", "app: web", "app: "+name, "${param.replicas}", "2", "${param.version}", fmt.Sprint(i)).Replace(deployment)
	}
	b.Run("capstan", func(b *testing.B) {
		r := kube.Runner{Dial: dial}
		for i := 0; b.Loop(); i++ {
			if res := r.Run(context.Background(), kubeJob(c, token, ns, manifest("capstan", i), nil)); res.Err != nil {
				b.Fatalf("%v\n%s", res.Err, res.Output)
			}
		}
	})
	b.Run("kubectl", func(b *testing.B) {
		if _, err := exec.LookPath("kubectl"); err != nil {
			b.Fatalf("kubectl is part of the suite (scripts/system-deps.sh): %v", err)
		}
		file := filepath.Join(b.TempDir(), "web.yaml")
		for i := 0; b.Loop(); i++ {
			if err := os.WriteFile(file, []byte(manifest("kubectl", i)), 0o600); err != nil {
				b.Fatal(err)
			}
			for _, args := range [][]string{{"apply", "-n", ns, "-f", file}, {"rollout", "status", "-n", ns, "deployment/kubectl", "--timeout=60s"}} {
				cmd := exec.Command("kubectl", append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("kubectl %v: %v\n%s", args, err, out)
				}
			}
		}
	})
	b.Run("floor-apply-only", func(b *testing.B) {
		client, err := kube.Connect(kubeJob(c, token, ns, "", nil).Target.Cluster, dial)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			objs, err := kube.Objects(manifest("floor", i), nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := client.Apply(context.Background(), objs[0], ns, false); err != nil {
				b.Fatal(err)
			}
		}
	})
}
