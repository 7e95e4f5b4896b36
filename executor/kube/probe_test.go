package kube_test

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/internal/kubetest"
)

// readers is what a probe reads beside the objects themselves.
var readers = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
}

func TestAProbeReadsTheRealObject(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "probe")
	token := c.Token(t, ns, append(append([]rbacv1.PolicyRule{}, workloads...), readers...), nil)
	r := kube.Runner{Dial: loopback(t)}
	service := "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n"
	j := kubeJob(c, token, ns, deployment+service, map[string]string{"replicas": "2", "version": "1"})
	if res := r.Run(context.Background(), j); res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	stuck := strings.NewReplacer("operator: NotIn", "operator: In", "name: web\n", "name: stuck\n", "app: web", "app: stuck").Replace(deployment)
	j.Spec.Timeout = "1s" // it will not be ready: worker-3 cannot pull
	if res := r.Run(context.Background(), kubeJobWith(j, stuck)); res.ErrKind != kube.ErrKindTimeout {
		t.Fatalf("stuck deployment: %s %v", res.ErrKind, res.Err)
	}
	p := kube.Probe{Dial: loopback(t)}
	target := j.Target

	t.Run("a rolled-out deployment passes, with its pods per node", func(t *testing.T) {
		result, source, _ := p.Probe(context.Background(), capstan.Probe{Name: "ready", Type: "kubernetes", Target: "cluster", Field: "spec.replicas",
			Object: &capstan.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}}, target)
		if result != capstan.EvidencePassed || source["uid"] == "" || source["resource_version"] == "" || source["observed"] != int64(2) {
			t.Fatalf("%s %v", result, source)
		}
		pods := source["pods"].(map[string]map[string]int)
		ready := 0
		for node, n := range pods {
			if node == "worker-3" {
				t.Fatalf("a pod on worker-3: %v", pods)
			}
			ready += n["ready"]
		}
		if ready != 2 {
			t.Fatalf("pods = %v, want 2 ready", pods)
		}
	})
	t.Run("a service with ready endpoints passes", func(t *testing.T) {
		result, source, _ := p.Probe(context.Background(), capstan.Probe{Name: "endpoints", Type: "kubernetes", Target: "cluster",
			Object: &capstan.ObjectRef{APIVersion: "v1", Kind: "Service", Namespace: ns, Name: "web"}}, target)
		if result != capstan.EvidencePassed || source["ready_endpoints"] != 2 {
			t.Fatalf("%s %v", result, source)
		}
	})
	t.Run("pods that cannot pull fail it, saying why", func(t *testing.T) {
		result, source, _ := p.Probe(context.Background(), capstan.Probe{Name: "ready", Type: "kubernetes", Target: "cluster",
			Object: &capstan.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "stuck"}}, target)
		notReady, _ := source["pods_not_ready"].([]string)
		if result != capstan.EvidenceFailed || len(notReady) == 0 || !strings.Contains(notReady[0], "worker-3: ErrImagePull") {
			t.Fatalf("%s %v", result, source)
		}
	})
	t.Run("a missing object fails it", func(t *testing.T) {
		result, source, _ := p.Probe(context.Background(), capstan.Probe{Name: "ready", Type: "kubernetes", Target: "cluster",
			Object: &capstan.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "nope"}}, target)
		if result != capstan.EvidenceFailed || source["present"] != false {
			t.Fatalf("%s %v", result, source)
		}
	})
	t.Run("an object outside its role fails it, forbidden", func(t *testing.T) {
		result, source, _ := p.Probe(context.Background(), capstan.Probe{Name: "ready", Type: "kubernetes", Target: "cluster",
			Object: &capstan.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "kube-system", Name: "x"}}, target)
		if result != capstan.EvidenceFailed || source["error_kind"] != kube.ErrKindForbidden {
			t.Fatalf("%s %v", result, source)
		}
	})
}

func kubeJobWith(j job.Job, manifests string) job.Job {
	j.Spec.Manifests = manifests
	return j
}
