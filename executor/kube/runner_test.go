package kube_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/internal/deadlinetest"
	"github.com/capstan-dev/capstan/internal/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// loopback is the egress allow-list of these tests: the test cluster.
func loopback(t testing.TB) kube.Dialer {
	t.Helper()
	e, err := local.ParseEgress([]string{"127.0.0.1/32"})
	if err != nil {
		t.Fatal(err)
	}
	return e.DialContext
}

// workloads is what a pack's RBAC typically grants its runner in its
// namespace.
var workloads = []rbacv1.PolicyRule{
	{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps", "services", "persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
}

func kubeJob(c *kubetest.Cluster, token, ns, manifests string, params map[string]string) job.Job {
	env := map[string]string{}
	for k, v := range params {
		env["CAPSTAN_PARAM_"+strings.ToUpper(k)] = v
	}
	return job.Job{OperationID: "op-kube", NodeID: "apply", Attempt: 1, Env: env,
		Spec:   capstan.RunSpec{Runner: "kubernetes", Target: "cluster", Manifests: manifests, Namespace: ns, Timeout: "60s"},
		Target: &job.Target{Requirement: "cluster", Resource: "kubernetes.cluster/test", Cluster: &job.Cluster{Server: c.Server, CA: c.CA, Token: []byte(token)}}}
}

// deployment keeps its pods off worker-3, whose registry the test
// cluster makes unreachable (the seed's §8 story has its own test).
const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: ${param.replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: kubernetes.io/hostname, operator: NotIn, values: [worker-3]}]
      containers:
      - {name: web, image: "registry.internal/web:${param.version}"}
`

// pinnedTo is deployment on node alone: a node of the test's own, whose
// taint it tolerates.
func pinnedTo(node string) string {
	return strings.NewReplacer("operator: NotIn, values: [worker-3]", "operator: In, values: ["+node+"]",
		"      affinity:\n", "      "+kubetest.TestNodeToleration+"\n      affinity:\n").Replace(deployment)
}

func applied(t *testing.T, res job.Result) []kube.Applied {
	t.Helper()
	var out []kube.Applied
	for _, line := range strings.Split(strings.TrimSpace(string(res.Output)), "\n") {
		if strings.HasPrefix(line, "error: ") || line == "" {
			continue
		}
		var a kube.Applied
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		out = append(out, a)
	}
	return out
}

func TestApplyRollsOutAndAReRunChangesNothing(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "apply")
	token := c.Token(t, ns, workloads, nil)
	r := kube.Runner{Dial: loopback(t)}
	j := kubeJob(c, token, ns, deployment, map[string]string{"replicas": "3", "version": "1.0"})

	first := r.Run(context.Background(), j)
	if first.Err != nil {
		t.Fatalf("first apply: %v\n%s", first.Err, first.Output)
	}
	a := applied(t, first)
	if len(a) != 1 || a[0].Action != "created" || a[0].UID == "" || !strings.HasPrefix(a[0].Ready, "3/3 updated, 3 available") {
		t.Fatalf("first apply = %+v", a)
	}
	d, err := c.Admin.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.AvailableReplicas != 3 || string(d.UID) != a[0].UID {
		t.Fatalf("live deployment: %d available, uid %s; the step said uid %s", d.Status.AvailableReplicas, d.UID, a[0].UID)
	}
	if len(first.Evidence) != 1 || first.Evidence[0].Source["uid"] != a[0].UID || first.Evidence[0].Source["resource_version"] != d.ResourceVersion {
		t.Fatalf("evidence = %+v, want the object's uid and resourceVersion %s", first.Evidence, d.ResourceVersion)
	}
	managers := map[string]bool{}
	for _, mf := range d.ManagedFields {
		managers[mf.Manager+"/"+string(mf.Operation)] = true
	}
	if !managers["capstan/Apply"] {
		t.Fatalf("managed fields %v: Capstan did not apply as its own field manager", managers)
	}

	again := r.Run(context.Background(), j)
	if again.Err != nil {
		t.Fatalf("second apply: %v", again.Err)
	}
	if b := applied(t, again); b[0].Action != "unchanged" || b[0].ResourceVersion != d.ResourceVersion {
		t.Fatalf("second apply = %+v; want unchanged at resourceVersion %s (nothing written)", b, d.ResourceVersion)
	}

	j.Env["CAPSTAN_PARAM_VERSION"] = "1.1"
	third := r.Run(context.Background(), j)
	if third.Err != nil {
		t.Fatalf("third apply: %v", third.Err)
	}
	b := applied(t, third)
	if b[0].Action != "configured" || len(b[0].Changes) != 1 || b[0].Changes[0].Path != "spec.template.spec.containers[0].image" || b[0].Changes[0].New != "registry.internal/web:1.1" {
		t.Fatalf("third apply = %+v; want the image changed", b)
	}
}

func TestAStepOutsideItsRoleIsForbidden(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "forbidden")
	token := c.Token(t, ns, workloads, nil)
	r := kube.Runner{Dial: loopback(t)}
	for name, manifests := range map[string]string{
		"a cluster role":            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: escalate}\nrules: [{apiGroups: ['*'], resources: ['*'], verbs: ['*']}]\n",
		"a secret it was not given": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {k: v}\n",
		"another namespace":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: kube-system}\ndata: {k: v}\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each waits out refusalSettle
			res := r.Run(context.Background(), kubeJob(c, token, ns, manifests, nil))
			if res.ErrKind != kube.ErrKindForbidden || capstan.ErrorCode(res.Err) != capstan.EFORBIDDEN || !strings.Contains(res.Err.Error(), "forbidden") {
				t.Fatalf("result = %s %v (%s), want kind forbidden, FORBIDDEN with the server's message", res.ErrKind, res.Err, capstan.ErrorCode(res.Err))
			}
		})
	}
}

func TestAnInvalidObjectFailsWithTheServersMessage(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "invalid")
	token := c.Token(t, ns, workloads, nil)
	bad := strings.Replace(deployment, "selector: {matchLabels: {app: web}}", "selector: {matchLabels: {app: other}}", 1)
	res := kube.Runner{Dial: loopback(t)}.Run(context.Background(), kubeJob(c, token, ns, bad, map[string]string{"replicas": "1", "version": "1"}))
	if res.ErrKind != kube.ErrKindInvalid || capstan.ErrorCode(res.Err) != capstan.EINVALID || !strings.Contains(res.Err.Error(), "selector") {
		t.Fatalf("result = %s %v, want invalid with the API server's message about the selector", res.ErrKind, res.Err)
	}
	t.Run("a namespace parameter that is no namespace name is refused before any request", func(t *testing.T) {
		j := kubeJob(c, token, ns, deployment, map[string]string{"replicas": "1", "version": "1", "ns": "../../api"})
		j.Spec.Namespace = "${param.ns}"
		res := kube.Runner{Dial: loopback(t)}.Run(context.Background(), j)
		if res.ErrKind != kube.ErrKindInvalid || capstan.ErrorCode(res.Err) != capstan.EINVALID || !strings.Contains(res.Err.Error(), `namespace "../../api"`) {
			t.Fatalf("result = %s %v, want invalid", res.ErrKind, res.Err)
		}
	})
	t.Run("a value of the wrong type is invalid, not a server in trouble", func(t *testing.T) {
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typed}\ndata: {limit: '${param.limit}'}\n" // a whole number: not a string
		res := kube.Runner{Dial: loopback(t)}.Run(context.Background(), kubeJob(c, token, ns, cm, map[string]string{"limit": "2"}))
		if res.ErrKind != kube.ErrKindInvalid || capstan.ErrorCode(res.Err) != capstan.EINVALID || !strings.Contains(res.Err.Error(), "expected string") {
			t.Fatalf("result = %s %v, want invalid", res.ErrKind, res.Err)
		}
	})
}

func TestAnotherManagersFieldIsAConflictUnlessThePackForces(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "conflict")
	token := c.Token(t, ns, workloads, nil)
	r := kube.Runner{Dial: loopback(t)}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: '${param.level}'}\n"
	if res := r.Run(context.Background(), kubeJob(c, token, ns, cm, map[string]string{"level": "info"})); res.Err != nil {
		t.Fatal(res.Err)
	}
	// Someone else applies the same field under their own manager, forcing.
	patch := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"level":"debug"}}`)
	force := true
	if _, err := c.Admin.CoreV1().ConfigMaps(ns).Patch(context.Background(), "settings", types.ApplyPatchType, patch, metav1.PatchOptions{FieldManager: "someone-else", Force: &force}); err != nil {
		t.Fatal(err)
	}
	j := kubeJob(c, token, ns, cm, map[string]string{"level": "warn"})
	res := r.Run(context.Background(), j)
	if res.ErrKind != kube.ErrKindConflict || capstan.ErrorCode(res.Err) != capstan.ECONFLICT || !strings.Contains(res.Err.Error(), "someone-else") {
		t.Fatalf("result = %s %v, want conflict naming the other manager", res.ErrKind, res.Err)
	}
	j.Spec.Force = true
	if res := r.Run(context.Background(), j); res.Err != nil {
		t.Fatalf("forced apply: %v", res.Err)
	}
	got, err := c.Admin.CoreV1().ConfigMaps(ns).Get(context.Background(), "settings", metav1.GetOptions{})
	if err != nil || got.Data["level"] != "warn" {
		t.Fatalf("after the forced apply: %v %v", got.Data, err)
	}
}

func TestAWaitEndsAtTheStepsTimeoutWithTheLastStatus(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "timeout")
	token := c.Token(t, ns, workloads, nil)
	// Every pod on worker-3, whose registry is unreachable: ErrImagePull.
	stuck := strings.Replace(deployment, "operator: NotIn", "operator: In", 1)
	j := kubeJob(c, token, ns, stuck, map[string]string{"replicas": "2", "version": "1"})
	j.Spec.Timeout = "3s"
	res := kube.Runner{Dial: loopback(t)}.Run(context.Background(), j)
	if res.ErrKind != kube.ErrKindTimeout || !strings.Contains(res.Err.Error(), "0 available") {
		t.Fatalf("result = %s %v, want a timeout with the last status (0 available)", res.ErrKind, res.Err)
	}
	if a := applied(t, res); len(a) != 1 || !strings.Contains(a[0].Ready, "0 available") {
		t.Fatalf("output %s: want the last observed status", res.Output)
	}
}

func TestAJobIsWaitedForUntilComplete(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "job")
	token := c.Token(t, ns, workloads, nil)
	manifests := `apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {kubernetes.io/hostname: worker-1}
      containers: [{name: m, image: registry.internal/migrate:1}]
`
	res := kube.Runner{Dial: loopback(t)}.Run(context.Background(), kubeJob(c, token, ns, manifests, nil))
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	if a := applied(t, res); a[0].Ready != "complete" {
		t.Fatalf("job = %+v, want complete", a)
	}
}

func TestAClaimIsWaitedForUntilBound(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "pvc")
	token := c.Token(t, ns, workloads, nil)
	c.Volume(t, ns)
	manifests := fmt.Sprintf("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: [ReadWriteOnce], storageClassName: %s, resources: {requests: {storage: 1Gi}}}\n", ns)
	res := kube.Runner{Dial: loopback(t)}.Run(context.Background(), kubeJob(c, token, ns, manifests, nil))
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	if a := applied(t, res); a[0].Ready != "phase Bound" {
		t.Fatalf("claim = %+v, want Bound", a)
	}
}

func TestACompensationDeletesAndWaitsUntilGone(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "delete")
	token := c.Token(t, ns, workloads, nil)
	r := kube.Runner{Dial: loopback(t)}
	j := kubeJob(c, token, ns, deployment, map[string]string{"replicas": "2", "version": "1"})
	if res := r.Run(context.Background(), j); res.Err != nil {
		t.Fatal(res.Err)
	}
	j.Spec.Delete = true
	res := r.Run(context.Background(), j)
	if res.Err != nil {
		t.Fatalf("delete: %v", res.Err)
	}
	if a := applied(t, res); a[0].Action != "deleted" || a[0].UID == "" {
		t.Fatalf("delete = %+v", a)
	}
	if _, err := c.Admin.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{}); err == nil {
		t.Fatal("the deployment is still there after its compensation")
	}
	pods, err := c.Admin.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Fatalf("pods left after a foreground delete: %d (%v)", len(pods.Items), err)
	}
	again := r.Run(context.Background(), j)
	if a := applied(t, again); again.Err != nil || a[0].Action != "absent" {
		t.Fatalf("second delete = %+v %v, want absent", a, again.Err)
	}
}

func TestNoClusterIsDialledOutsideTheAllowList(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	for name, dial := range map[string]kube.Dialer{"no allow-list": nil, "another network": func() kube.Dialer {
		e, err := local.ParseEgress([]string{"10.0.0.0/8"})
		if err != nil {
			t.Fatal(err)
		}
		return e.DialContext
	}()} {
		t.Run(name, func(t *testing.T) {
			res := kube.Runner{Dial: dial}.Run(context.Background(), kubeJob(c, "any", "default", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", nil))
			if res.ErrKind != kube.ErrKindForbidden || !strings.Contains(res.Err.Error(), "egress") {
				t.Fatalf("result = %s %v, want forbidden by the egress allow-list", res.ErrKind, res.Err)
			}
		})
	}
}

func TestAClusterTargetIsRequired(t *testing.T) {
	j := job.Job{NodeID: "n", Spec: capstan.RunSpec{Runner: "kubernetes", Target: "cluster", Manifests: "x"}, Target: &job.Target{Resource: "compute.node/h1"}}
	if res := (kube.Runner{}).Run(context.Background(), j); res.ErrKind != job.ErrKindTarget {
		t.Fatalf("result = %s %v, want a target error", res.ErrKind, res.Err)
	}
}

func TestAClusterThatIsNotThePinnedOneIsRefused(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	other := kubetest.OtherCA(t)
	j := kubeJob(c, "any", "default", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", nil)
	j.Target.Cluster.CA = other
	res := kube.Runner{Dial: loopback(t)}.Run(context.Background(), j)
	if res.ErrKind != job.ErrKindTarget || capstan.ErrorCode(res.Err) != capstan.EFORBIDDEN || !strings.Contains(res.Err.Error(), "does not match the ca pinned") {
		t.Fatalf("result = %s %v, want a target error: the certificate does not match the pinned CA", res.ErrKind, res.Err)
	}
}

func TestASecretsValuesNeverReachTheOutput(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "secret")
	token := c.Token(t, ns, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create", "patch"}}}, nil)
	r := kube.Runner{Dial: loopback(t)}
	manifest := "apiVersion: v1\nkind: Secret\nmetadata: {name: s3}\nstringData: {secret_key: '${param.key}'}\n"
	first := r.Run(context.Background(), kubeJob(c, token, ns, manifest, map[string]string{"key": "first-value-0123"}))
	second := r.Run(context.Background(), kubeJob(c, token, ns, manifest, map[string]string{"key": "second-value-4567"}))
	for _, res := range []job.Result{first, second} {
		if res.Err != nil {
			t.Fatalf("%v\n%s", res.Err, res.Output)
		}
		for _, v := range []string{"first-value-0123", "second-value-4567", "Zmlyc3Qtdm", "c2Vjb25kLX"} {
			if strings.Contains(string(res.Output), v) || strings.Contains(fmt.Sprint(res.Evidence), v) {
				t.Fatalf("a secret's value (%s) in the output:\n%s", v, res.Output)
			}
		}
	}
	a := applied(t, second)
	if a[0].Action != "configured" || len(a[0].Changes) != 1 || a[0].Changes[0].Path != "data.secret_key" || a[0].Changes[0].New != "(secret)" {
		t.Fatalf("second apply = %+v; want the key named, its value masked", a)
	}
}

func TestAStepWhoseLeaseRanOutAppliesNothing(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "lease")
	token := c.Token(t, ns, workloads, nil)
	j := kubeJob(c, token, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\ndata: {k: v}\n", nil)
	j.Deadline = deadlinetest.In(-time.Second) // a replica that ran again after its lease
	res := kube.Runner{Dial: loopback(t)}.Run(context.Background(), j)
	if res.ErrKind != job.ErrKindLease {
		t.Fatalf("result = %s %v, want the lease's", res.ErrKind, res.Err)
	}
	if _, err := c.Admin.CoreV1().ConfigMaps(ns).Get(context.Background(), "late", metav1.GetOptions{}); err == nil {
		t.Fatal("a step past its lease applied its object")
	}
}
