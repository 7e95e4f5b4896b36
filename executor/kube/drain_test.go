package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/internal/kubetest"
)

// drainers is what a drain needs, cluster-wide: the nodes to cordon, the
// pods on one to list, their eviction.
var drainers = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}},
}

func TestADrainHonoursDisruptionBudgetsAndNeverDeletesAroundThem(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "drain")
	node := c.Node(t, "drain", nil)
	token := c.Token(t, ns, workloads, drainers)
	r := kube.Runner{Dial: loopback(t)}
	pinned := pinnedTo(node)
	if res := r.Run(context.Background(), kubeJob(c, token, ns, pinned, map[string]string{"replicas": "2", "version": "1.0"})); res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	ctx := context.Background()
	two := intstr.FromInt32(2)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	if _, err := c.Admin.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The budget is in force once the disruption controller counted it.
	waitBudget(t, c, ns)
	drain := kubeJob(c, token, ns, "", map[string]string{"node": node})
	drain.Spec.Manifests, drain.Spec.Drain, drain.Spec.Timeout = "", "${param.node}", "3s"

	res := r.Run(ctx, drain)
	if res.ErrKind != kube.ErrKindBlocked || !strings.Contains(res.Err.Error(), "PodDisruptionBudget") || !strings.Contains(res.Err.Error(), "nothing was deleted") {
		t.Fatalf("a drain against the budget = %s %v\n%s", res.ErrKind, res.Err, res.Output)
	}
	if len(res.Evidence) != 1 || res.Evidence[0].Result != capstan.EvidenceFailed || len(res.Evidence[0].Source["blocked"].([]string)) != 2 {
		t.Fatalf("evidence = %+v", res.Evidence)
	}
	pods, err := c.Admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("the budget's pods: %d, %v", len(pods.Items), err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			t.Fatalf("pod %s is being deleted around its budget", p.Name)
		}
	}
	n, err := c.Admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil || !n.Spec.Unschedulable {
		t.Fatalf("node %s not cordoned: %v", node, err)
	}

	// The budget lifted, the drain evicts both and waits until they are gone.
	if err := c.Admin.PolicyV1().PodDisruptionBudgets(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	drain.Spec.Timeout = "60s"
	res = r.Run(ctx, drain)
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	evicted := res.Evidence[0].Source["evicted"].([]string)
	if res.Evidence[0].Result != capstan.EvidencePassed || len(evicted) != 2 || res.Evidence[0].Source["cordoned"] != true {
		t.Fatalf("evidence = %+v", res.Evidence)
	}
	for _, p := range evicted {
		name := strings.TrimPrefix(p, ns+"/")
		if _, err := c.Admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			t.Fatalf("evicted pod %s is still there", name)
		}
	}
	t.Run("drained, the node is removed", func(t *testing.T) {
		remove := drain
		remove.Spec.Delete = true
		res := r.Run(ctx, remove)
		if res.Err != nil || res.Evidence[0].Source["removed"] != true {
			t.Fatalf("%v %+v\n%s", res.Err, res.Evidence, res.Output)
		}
		if _, err := c.Admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err == nil {
			t.Fatalf("node %s is still there", node)
		}
	})
	t.Run("a node name that is no name is refused before any request", func(t *testing.T) {
		bad := drain
		bad.Env = map[string]string{"CAPSTAN_PARAM_NODE": "../../namespaces"}
		if res := r.Run(ctx, bad); res.ErrKind != kube.ErrKindInvalid || capstan.ErrorCode(res.Err) != capstan.EINVALID {
			t.Fatalf("%s %v", res.ErrKind, res.Err)
		}
	})
}

// waitBudget waits on a watch until the disruption controller has
// counted the budget's pods.
func waitBudget(t *testing.T, c *kubetest.Cluster, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := c.Admin.PolicyV1().PodDisruptionBudgets(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if p, ok := ev.Object.(*policyv1.PodDisruptionBudget); ok && p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 2 {
			return
		}
	}
	t.Fatal("the disruption controller never counted the budget's pods")
}
