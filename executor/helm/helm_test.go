package helm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/helm"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/internal/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// releaseRules are what a helm step needs in its namespace: the chart's
// objects, and the Secrets Helm keeps its releases in.
var releaseRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"services", "secrets", "pods", "events"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
}

func chartFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	root := filepath.Join("testdata", "web")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

type fixture struct {
	c      *kubetest.Cluster
	ns     string
	runner helm.Runner
	base   job.Job
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "helm")
	token := c.Token(t, ns, releaseRules, nil)
	egress, err := local.ParseEgress([]string{"127.0.0.1/32"})
	if err != nil {
		t.Fatal(err)
	}
	base := job.Job{OperationID: "op-helm", NodeID: "helm-install", Attempt: 1, Env: map[string]string{"CAPSTAN_RESOURCE_NAME": "web"},
		Spec:   capstan.RunSpec{Runner: "helm", Target: "cluster", Chart: "web", Release: "${resource.name}", Namespace: ns, Timeout: "60s", ChartFiles: chartFiles(t)},
		Target: &job.Target{Requirement: "cluster", Resource: "kubernetes.cluster/test", Cluster: &job.Cluster{Server: c.Server, CA: c.CA, Token: []byte(token)}}}
	return &fixture{c: c, ns: ns, runner: helm.Runner{Dial: egress.DialContext}, base: base}
}

func (f *fixture) run(t *testing.T, values string, mutate func(*job.Job)) job.Result {
	t.Helper()
	j := f.base
	j.Spec.Values = values
	if mutate != nil {
		mutate(&j)
	}
	return f.runner.Run(context.Background(), j)
}

func (f *fixture) image(t *testing.T) string {
	t.Helper()
	d, err := f.c.Admin.AppsV1().Deployments(f.ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

func source(t *testing.T, res job.Result) map[string]any {
	t.Helper()
	if len(res.Evidence) != 1 {
		t.Fatalf("evidence = %+v, want one item\n%s", res.Evidence, res.Output)
	}
	return res.Evidence[0].Source
}

func TestAChartIsInstalledUpgradedAndAFailedUpgradeRollsBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	res := f.run(t, "image: 'registry.internal/web:${param.version}'", func(j *job.Job) { j.Env["CAPSTAN_PARAM_VERSION"] = "1.0" })
	if res.Err != nil {
		t.Fatalf("install: %v\n%s", res.Err, res.Output)
	}
	if s := source(t, res); s["action"] != "installed" || s["revision"] != 1 || s["status"] != "deployed" || s["chart"] != "web-0.1.0" {
		t.Fatalf("install evidence = %v", s)
	}
	d, err := f.c.Admin.AppsV1().Deployments(f.ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil || d.Status.AvailableReplicas != 2 {
		t.Fatalf("after the install: %v available (%v); the install waits until ready", d.Status.AvailableReplicas, err)
	}

	res = f.run(t, "image: registry.internal/web:1.1", nil)
	if res.Err != nil {
		t.Fatalf("upgrade: %v\n%s", res.Err, res.Output)
	}
	if s := source(t, res); s["action"] != "upgraded" || s["revision"] != 2 || f.image(t) != "registry.internal/web:1.1" {
		t.Fatalf("upgrade evidence = %v, image %s", s, f.image(t))
	}

	// An upgrade whose pods all land where the registry is unreachable
	// never becomes ready: it fails and rolls back within the step.
	res = f.run(t, "image: registry.internal/web:2.0\nonly: worker-3", func(j *job.Job) { j.Spec.Timeout = "8s" })
	if res.Err == nil {
		t.Fatalf("an upgrade that cannot become ready succeeded:\n%s", res.Output)
	}
	if s := source(t, res); s["action"] != "failed-then-rolled-back" || s["status"] != "deployed" || s["revision"] != 4 {
		t.Fatalf("rollback evidence = %v\n%s", s, res.Output)
	}
	if got := f.image(t); got != "registry.internal/web:1.1" {
		t.Fatalf("after the failed upgrade the image is %s, want 1.1 again", got)
	}

	// The step's compensation: back to the revision before the last good
	// one (1.0), skipping the failed one.
	res = f.run(t, "", func(j *job.Job) { j.Spec.Undo = true })
	if res.Err != nil {
		t.Fatalf("undo: %v\n%s", res.Err, res.Output)
	}
	if s := source(t, res); s["action"] != "rolled-back" || f.image(t) != "registry.internal/web:1.0" {
		t.Fatalf("undo evidence = %v, image %s", s, f.image(t))
	}
}

func TestAReleasesObjectsAreRecordedForDrift(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.run(t, "", nil)
	if res.Err != nil {
		t.Fatalf("install: %v\n%s", res.Err, res.Output)
	}
	objs := capstan.AppliedObjects(nil, res.Evidence)
	if len(objs) != 2 { // the chart's Deployment and Service
		t.Fatalf("recorded = %v", objs)
	}
	for _, o := range objs {
		if ann, _, _ := unstructuredString(o, "metadata", "annotations", "meta.helm.sh/release-name"); ann != "web" {
			t.Fatalf("the record lacks Helm's annotation: %v", o)
		}
	}
	target := f.base.Target
	p := kube.Probe{Dial: f.runner.Dial}
	probe := capstan.Probe{Name: "objects", Type: "kubernetes", Target: "cluster", Drift: true}
	if result, source, _ := p.Drift(context.Background(), probe, target, objs); result != capstan.EvidencePassed || source["drift"] != nil {
		t.Fatalf("as installed: %s %v", result, source)
	}
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 4}}
	if _, err := f.c.Admin.AppsV1().Deployments(f.ns).UpdateScale(context.Background(), "web", scale, metav1.UpdateOptions{FieldManager: "kubectl"}); err != nil {
		t.Fatal(err)
	}
	_, source, _ := p.Drift(context.Background(), probe, target, objs)
	drift, _ := source["drift"].([]any)
	if len(drift) != 1 || drift[0].(map[string]any)["field"] != "Deployment "+f.ns+"/web spec.replicas" || drift[0].(map[string]any)["changed_by"] != "kubectl" {
		t.Fatalf("after kubectl scale: %v", source)
	}
}

func unstructuredString(o any, path ...string) (string, bool, error) {
	m, _ := o.(map[string]any)
	for _, k := range path[:len(path)-1] {
		m, _ = m[k].(map[string]any)
	}
	s, ok := m[path[len(path)-1]].(string)
	return s, ok, nil
}

func TestUndoingAFirstInstallUninstallsIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if res := f.run(t, "", nil); res.Err != nil {
		t.Fatalf("install: %v\n%s", res.Err, res.Output)
	}
	res := f.run(t, "", func(j *job.Job) { j.Spec.Undo = true })
	if res.Err != nil || source(t, res)["action"] != "uninstalled" {
		t.Fatalf("undo: %v %v", res.Err, res.Output)
	}
	if _, err := f.c.Admin.AppsV1().Deployments(f.ns).Get(context.Background(), "web", metav1.GetOptions{}); err == nil {
		t.Fatal("the deployment outlived the uninstall")
	}
	again := f.run(t, "", func(j *job.Job) { j.Spec.Undo = true })
	if again.Err != nil || source(t, again)["action"] != "absent" {
		t.Fatalf("a second undo: %v %s", again.Err, again.Output)
	}
}

func TestAFailedFirstInstallIsUninstalled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.run(t, "only: worker-3", func(j *job.Job) { j.Spec.Timeout = "6s" })
	if res.Err == nil {
		t.Fatalf("an install that cannot become ready succeeded:\n%s", res.Output)
	}
	if s := source(t, res); s["action"] != "failed-then-uninstalled" {
		t.Fatalf("evidence = %v", s)
	}
	if _, err := f.c.Admin.AppsV1().Deployments(f.ns).Get(context.Background(), "web", metav1.GetOptions{}); err == nil {
		t.Fatal("a failed install left its deployment")
	}
}

func TestAHelmStepOutsideItsRoleIsForbidden(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.run(t, "", func(j *job.Job) { j.Spec.Namespace = "kube-system" })
	if res.ErrKind != "forbidden" || !strings.Contains(res.Err.Error(), "forbidden") {
		t.Fatalf("result = %s %v", res.ErrKind, res.Err)
	}
}

func TestBadHelmInputIsInvalid(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for name, mutate := range map[string]func(*job.Job){
		"no chart files":       func(j *job.Job) { j.Spec.ChartFiles = nil },
		"a bad release name":   func(j *job.Job) { j.Spec.Release = "Web_1" },
		"values that are junk": func(j *job.Job) { j.Spec.Values = "image: [" },
		"an unknown parameter": func(j *job.Job) { j.Spec.Values = "image: ${param.nope}" },
		"a broken chart":       func(j *job.Job) { j.Spec.ChartFiles = map[string]string{"Chart.yaml": "name: [\n"} },
		"a template reading the server's environment": func(j *job.Job) {
			files := chartFiles(t)
			files["templates/leak.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leak}\ndata: {home: {{ env \"HOME\" | quote }}}\n"
			j.Spec.ChartFiles = files
		},
	} {
		t.Run(name, func(t *testing.T) {
			res := f.run(t, "", mutate)
			if res.ErrKind != "invalid" || capstan.ErrorCode(res.Err) != capstan.EINVALID {
				t.Fatalf("result = %s %v", res.ErrKind, res.Err)
			}
		})
	}
}

// TestAFailedInstallSaysWhatTheClusterWarned: a namespace whose quota
// counts memory requests refuses the chart's pods (they ask for none); the
// install never becomes ready and is uninstalled, and the step's error
// carries the ReplicaSet's FailedCreate warning, read after the rollback
// removed the objects (their events stay).
func TestAFailedInstallSaysWhatTheClusterWarned(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "memory", Namespace: f.ns},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsMemory: resource.MustParse("1Gi")}}}
	if _, err := f.c.Admin.CoreV1().ResourceQuotas(f.ns).Create(context.Background(), quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := f.run(t, "", func(j *job.Job) { j.Spec.Timeout = "6s" })
	if res.Err == nil {
		t.Fatalf("an install whose pods are refused succeeded:\n%s", res.Output)
	}
	if s := source(t, res); s["action"] != "failed-then-uninstalled" {
		t.Fatalf("evidence = %v", s)
	}
	if msg := res.Err.Error(); !strings.Contains(msg, "the cluster warned: ReplicaSet web-") || !strings.Contains(msg, "FailedCreate") || !strings.Contains(msg, "requests.memory") {
		t.Fatalf("error = %v", res.Err)
	}
	if res.ErrKind != "timeout" {
		t.Fatalf("kind = %s, want timeout", res.ErrKind)
	}
}
