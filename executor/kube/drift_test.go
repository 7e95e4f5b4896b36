package kube_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/internal/kubecluster"
	"github.com/capstan-dev/capstan/internal/kubetest"
)

// nodeReaders lets a drift probe say which nodes are not Ready.
var nodeReaders = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}}}

const driftProbe = "objects-as-applied"

// drift runs the drift probe on what the applied objects record and
// returns its verdict, its source and its drift by field.
func drift(t *testing.T, target *job.Target, objs []any) (string, map[string]any, map[string]map[string]any) {
	t.Helper()
	p := kube.Probe{Dial: loopback(t)}
	result, source, _ := p.Drift(context.Background(), capstan.Probe{Name: driftProbe, Type: "kubernetes", Target: "cluster", Drift: true}, target, objs)
	byField := map[string]map[string]any{}
	list, _ := source["drift"].([]any)
	for _, item := range list {
		d := item.(map[string]any)
		byField[d["field"].(string)] = d
	}
	return result, source, byField
}

func TestDriftIsWhatAnotherManagerChangedInWhatCapstanApplied(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "drift")
	token := c.Token(t, ns, append(append([]rbacv1.PolicyRule{}, workloads...), readers...), nodeReaders)
	r := kube.Runner{Dial: loopback(t)}
	config := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config}\ndata: {level: info, limit: 'max-${param.replicas}'}\n" +
		"---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}\n"
	j := kubeJob(c, token, ns, deployment+config, map[string]string{"replicas": "2", "version": "1.0"})
	res := r.Run(context.Background(), j)
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	objs := capstan.AppliedObjects(nil, res.Evidence)
	if len(objs) != 3 {
		t.Fatalf("applied objects recorded: %v", objs)
	}
	ctx := context.Background()
	deployments := c.Admin.AppsV1().Deployments(ns)

	t.Run("as applied, nothing drifted, with one list per kind", func(t *testing.T) {
		result, source, byField := drift(t, j.Target, objs)
		if result != capstan.EvidencePassed || len(byField) != 0 {
			t.Fatalf("%s %v", result, source)
		}
		if n := source["requests"].(int); n > 5 { // three lists, the nodes, the workload's pods
			t.Fatalf("%d API requests for three objects", n)
		}
	})
	t.Run("another manager's own field is not drift", func(t *testing.T) {
		patch := []byte(`{"metadata":{"labels":{"team":"payments"}}}`)
		if _, err := deployments.Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-label"}); err != nil {
			t.Fatal(err)
		}
		if result, source, byField := drift(t, j.Target, objs); result != capstan.EvidencePassed || len(byField) != 0 {
			t.Fatalf("%s %v", result, source)
		}
	})
	t.Run("kubectl scale and set image are drift, each named by who did it", func(t *testing.T) {
		scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 5}}
		if _, err := deployments.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{FieldManager: "kubectl"}); err != nil {
			t.Fatal(err)
		}
		patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"registry.internal/web:hotfix"}]}}}}`)
		if _, err := deployments.Patch(ctx, "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-set"}); err != nil {
			t.Fatal(err)
		}
		_, source, byField := drift(t, j.Target, objs)
		replicas := byField["Deployment "+ns+"/web spec.replicas"]
		image := byField["Deployment "+ns+"/web spec.template.spec.containers[0].image"]
		if replicas == nil || fmt.Sprint(replicas["desired"]) != "2" || fmt.Sprint(replicas["observed"]) != "5" || replicas["changed_by"] != "kubectl" {
			t.Fatalf("replicas drift = %v (source %v)", replicas, source)
		}
		if image == nil || image["desired"] != "registry.internal/web:1.0" || image["observed"] != "registry.internal/web:hotfix" || image["changed_by"] != "kubectl-set" {
			t.Fatalf("image drift = %v (source %v)", image, source)
		}
		if len(byField) != 2 {
			t.Fatalf("drift = %v, want the two fields only", byField)
		}
	})
	t.Run("a reapply takes back Capstan's fields and leaves the others'", func(t *testing.T) {
		repair := j
		repair.Spec.Manifests, repair.Spec.Reapply, repair.Spec.Force = "", true, true
		repair.Desired = map[string]any{capstan.AppliedObjectsKey: objs}
		res := r.Run(ctx, repair)
		if res.Err != nil {
			t.Fatalf("%v\n%s", res.Err, res.Output)
		}
		// Nothing drifted once repaired. (Its readiness is not asserted
		// here: right after a reapply that reverts both the replicas and
		// the template, the Deployment has been seen reported not ready
		// for a moment, though the step's wait saw it rolled out.)
		if _, source, byField := drift(t, j.Target, objs); len(byField) != 0 {
			t.Fatalf("after the repair: %v", source)
		}
		d, err := deployments.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Labels["team"] != "payments" || *d.Spec.Replicas != 2 {
			t.Fatalf("after the repair: labels %v, replicas %d", d.Labels, *d.Spec.Replicas)
		}
	})
	t.Run("a deleted object is drift: missing", func(t *testing.T) {
		if err := c.Admin.CoreV1().ConfigMaps(ns).Delete(ctx, "web-config", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		_, source, byField := drift(t, j.Target, objs)
		if d := byField["ConfigMap "+ns+"/web-config"]; d == nil || d["desired"] != "present" || d["observed"] != "missing" {
			t.Fatalf("drift = %v", source)
		}
	})
}

func TestAWorkloadOnANodeThatIsNotReadyIsDegraded(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "notready")
	node := c.Node(t, "drift", nil)
	token := c.Token(t, ns, append(append([]rbacv1.PolicyRule{}, workloads...), readers...), nodeReaders)
	pinned := pinnedTo(node)
	j := kubeJob(c, token, ns, pinned, map[string]string{"replicas": "1", "version": "1.0"})
	res := kube.Runner{Dial: loopback(t)}.Run(context.Background(), j)
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	objs := capstan.AppliedObjects(nil, res.Evidence)
	if result, source, _ := drift(t, j.Target, objs); result != capstan.EvidencePassed {
		t.Fatalf("on a Ready node: %s %v", result, source)
	}
	patch := []byte(`{"metadata":{"labels":{"capstan.dev/test-node":"not-ready"}}}`)
	if _, err := c.Admin.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kubecluster.WaitNodeReady(context.Background(), c.Admin, node, false); err != nil {
		t.Fatal(err)
	}
	result, source, byField := drift(t, j.Target, objs)
	notReady := fmt.Sprint(source["not_ready"])
	if result != capstan.EvidenceFailed || len(byField) != 0 || !strings.Contains(notReady, "is on node "+node+", which is not Ready: Ready=False (KubeletNotReady)") {
		t.Fatalf("on a node not Ready: %s %v", result, source)
	}
}

func TestAReapplyNeverWritesWhatWasNotRecorded(t *testing.T) {
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db", "namespace": "shop"}, "data": map[string]any{"password": "(secret)"}}
	config := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "app", "namespace": "shop"}, "data": map[string]any{"dsn": "postgres://app:[redacted]@db"}}
	plain := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "plain", "namespace": "shop"}, "data": map[string]any{"level": "info"}}
	for _, tc := range []struct {
		name     string
		recorded any
		want     []string // the objects reapplied
		refused  string
	}{
		{"nothing recorded", nil, nil, "records no applied object"},
		{"not a list of objects", []any{"junk"}, nil, "not an object"},
		{"a masked value", []any{plain, config}, nil, "applied with a secret value"},
		{"a Secret is left out", []any{secret, plain}, []string{"plain"}, ""},
		{"only a Secret: nothing to repair", []any{secret}, nil, "records no applied object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := kube.Reapplied(tc.recorded)
			if tc.refused != "" {
				if err == nil || capstan.ErrorCode(err) != capstan.EINVALID || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("err = %v, want EINVALID %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range objs {
				names = append(names, o.GetName())
			}
			if fmt.Sprint(names) != fmt.Sprint(tc.want) {
				t.Fatalf("reapplied %v, want %v", names, tc.want)
			}
		})
	}
}
