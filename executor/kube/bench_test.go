package kube_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/internal/kubetest"
	"github.com/capstan-dev/capstan/internal/testenv"
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

// BenchmarkObserveApplied is one round of drift observation of a
// resource's applied objects (1,000 ConfigMaps, or make test's small
// size): the drift probe, which lists each kind once per namespace and
// compares every object with what was applied; beside it, a GET per
// object (what it avoids), and the floor, a bare list of the same
// objects with no comparison. requests/object counts the probe's API
// requests (its client's discovery aside).
//
//	go run ./internal/withcluster -- go test ./executor/kube -run '^$' -bench ObserveApplied -benchtime 20x
func BenchmarkObserveApplied(b *testing.B) {
	n := testenv.BenchResources(1000)
	c := kubetest.Shared(b)
	ns := c.Namespace(b, "observe")
	token := c.Token(b, ns, workloads, nil)
	dial := loopback(b)
	r := kube.Runner{Dial: dial}
	var objs []any
	for start := 0; start < n; start += kube.MaxObjects {
		var doc strings.Builder
		for i := start; i < min(n, start+kube.MaxObjects); i++ {
			fmt.Fprintf(&doc, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, labels: {app: observe}}\ndata: {index: '%d', level: info}\n", i, i)
		}
		res := r.Run(context.Background(), kubeJob(c, token, ns, doc.String(), nil))
		if res.Err != nil {
			b.Fatalf("%v\n%s", res.Err, res.Output)
		}
		objs = capstan.AppliedObjects(objs, res.Evidence)
	}
	if len(objs) != n {
		b.Fatalf("%d applied objects recorded, want %d", len(objs), n)
	}
	target := kubeJob(c, token, ns, "", nil).Target
	b.Run("drift-probe", func(b *testing.B) {
		p := kube.Probe{Dial: dial}
		var requests int
		for b.Loop() {
			result, source, _ := p.Drift(context.Background(), capstan.Probe{Name: "objects", Type: "kubernetes", Target: "cluster", Drift: true}, target, objs)
			if result != capstan.EvidencePassed || source["drift"] != nil {
				b.Fatalf("%s %v", result, source)
			}
			requests = source["requests"].(int)
		}
		b.ReportMetric(float64(requests)/float64(n), "requests/object")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/object")
	})
	client, err := kube.Connect(target.Cluster, dial)
	if err != nil {
		b.Fatal(err)
	}
	configMaps := client.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	b.Run("get-per-object", func(b *testing.B) {
		for b.Loop() {
			for i := range n {
				if _, err := configMaps.Get(context.Background(), fmt.Sprintf("cm-%d", i), metav1.GetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(1, "requests/object")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/object")
	})
	b.Run("floor-bare-list", func(b *testing.B) {
		var requests int
		for b.Loop() {
			requests = 0
			opts := metav1.ListOptions{Limit: 500}
			for {
				requests++
				list, err := configMaps.List(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				if opts.Continue = list.GetContinue(); opts.Continue == "" {
					break
				}
			}
		}
		b.ReportMetric(float64(requests)/float64(n), "requests/object")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/object")
	})
}
