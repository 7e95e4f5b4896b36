package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/internal/kubetest"
)

// chartPack is a directory pack that ships the helm runner's test chart
// (executor/helm/testdata/web) and installs or upgrades it as the
// release a web.release resource names, its values from parameters.
const chartPack = `id: webchart
version: 1.0.0
resource_types:
  - {key: web.release, display_name: Web release, allowed_actions: [install, upgrade]}
rbac:
  - {api_groups: [apps], resources: [deployments, replicasets], verbs: [get, list, watch, create, update, patch, delete], why: the chart's Deployment}
  - {api_groups: [""], resources: [secrets, pods, events], verbs: [get, list, watch, create, update, patch, delete], why: Helm keeps its releases in Secrets}
scenarios:
%s`

const chartScenario = `  - id: web.%[1]s
    action: %[1]s
    target_resource_type: web.release
    editable_parameters: [image, only]
    requires:
      - {id: cluster, capability: kubernetes.cluster, strategy: existing, workload: true, constraints: {name: "${intent.cluster}", environment: "${intent.environment}"}}
    plan:
      nodes:
        - id: helm-%[1]s
          type: job
          title: helm %[1]s web
          requires: [cluster]
          job:
            inputs: {parameters: {image: "registry.internal/web:1.0", only: ""}}
            run: {runner: helm, target: cluster, chart: web, release: '${resource.name}', namespace: %[2]s, timeout: 24s, values: "image: '${param.image}'\nonly: '${param.only}'"}
            controls: {idempotent: true, retry: {maximum_attempts: 1}}
`

// TestAStepsFailureOnTheClusterIsClearAndRolledBack is what a cluster's
// refusals look like through the API, on both stores: an object the API
// server's admission refuses fails its step INVALID with the server's own
// words, at its first attempt (another would meet the same refusal); a
// chart whose install never becomes ready is uninstalled within its step,
// and an upgrade that never becomes ready is rolled back to the release
// before, each with the evidence of what Helm did.
func TestAStepsFailureOnTheClusterIsClearAndRolledBack(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "refused")
	// The bundled packs' grant, and the chart pack's: Helm's release
	// Secrets, the ReplicaSets its wait reads.
	token := bundledGrant(t, c, "capstan-faults",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"get", "list", "watch"}})
	packsDir := t.TempDir()
	chartDir := filepath.Join(packsDir, "webchart", "charts", "web")
	require.NoError(t, os.CopyFS(chartDir, os.DirFS(filepath.Join("..", "..", "executor", "helm", "testdata", "web"))))
	require.NoError(t, os.WriteFile(filepath.Join(packsDir, "webchart", "pack.yaml"),
		[]byte(fmt.Sprintf(chartPack, fmt.Sprintf(chartScenario, "install", ns)+fmt.Sprintf(chartScenario, "upgrade", ns))), 0o644))
	for store, args := range bothStores(t, "--egress-allow", "127.0.0.1/32", "--packs", packsDir) {
		t.Run(store, func(t *testing.T) {
			env := "lab-" + store
			lab := startKubeLab(t, c, env, token, args...)
			p := lab.p
			ok := func(q string, vars map[string]any) map[string]any { t.Helper(); return lab.ok(kubeAdmin, q, vars) }
			run := func(action, typ, name, node string, params map[string]any) (string, map[string]any) {
				t.Helper()
				intent := ok(`mutation($a: String!, $t: String!, $n: String!, $e: String!) { createIntent(input: {action: $a, targetResourceType: $t, desiredResult: {name: $n}, constraints: {environment: $e, cluster: "lab-k8s"}}) { id } }`,
					map[string]any{"a": action, "t": typ, "n": name, "e": env})["createIntent"].(map[string]any)["id"]
				plan := ok(`mutation($id: ID!) { planIntent(input: {intent: $id}) { id status version problems } }`, map[string]any{"id": intent})["planIntent"].(map[string]any)
				require.Equal(t, "READY", plan["status"], "%v", plan)
				ok(`mutation($p: ID!, $v: Int!, $n: String!, $params: Map!) { editPlan(input: {plan: $p, version: $v, changes: [{op: SET_PARAMETERS, node: $n, parameters: $params}]}) { id } }`,
					map[string]any{"p": plan["id"], "v": plan["version"], "n": node, "params": params})
				op := ok(`mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
				var got map[string]any
				waitForOp(t, p, op, func(o map[string]any) bool {
					got = o
					for _, r := range o["nodeRuns"].([]any) {
						if s := r.(map[string]any)["status"]; s == "FAILED" || s == "SUCCEEDED" {
							return o["status"] != "RUNNING"
						}
					}
					return false
				})
				return op, got
			}

			// Admission refuses: INVALID, in the server's words, once.
			_, got := run("create", "kubernetes.app", "refused-"+store, "apply-app", map[string]any{"namespace": ns, "replicas": -1})
			nr := got["nodeRuns"].([]any)[0].(map[string]any)
			require.Equal(t, "FAILED", nr["status"], "%v", got)
			require.Contains(t, nr["error"], "INVALID")
			require.Contains(t, nr["error"], "spec.replicas: Invalid value: -1: must be greater than or equal to 0", "the API server's own words")
			require.EqualValues(t, 1, nr["attempts"], "an admission refusal is not tried again")

			// A chart that never becomes ready is uninstalled within its step.
			release := "web-" + store
			_, got = run("install", "web.release", release, "helm-install", map[string]any{"only": "worker-3"})
			require.Equal(t, "FAILED", got["nodeRuns"].([]any)[0].(map[string]any)["status"], "%v", got)
			require.Equal(t, "failed-then-uninstalled", helmEvidence(t, got)["action"], "%v", got)
			_, err := c.Admin.AppsV1().Deployments(ns).Get(context.Background(), release, metav1.GetOptions{})
			require.Error(t, err, "a failed install leaves nothing")

			// Installed, then an upgrade that never becomes ready: rolled back.
			_, got = run("install", "web.release", release, "helm-install", map[string]any{"only": ""})
			require.Equal(t, "SUCCEEDED", got["status"], "%v", got)
			_, got = run("upgrade", "web.release", release, "helm-upgrade", map[string]any{"image": "registry.internal/web:2.0", "only": "worker-3"})
			require.Equal(t, "FAILED", got["nodeRuns"].([]any)[0].(map[string]any)["status"], "%v", got)
			rolled := helmEvidence(t, got)
			require.Equal(t, "failed-then-rolled-back", rolled["action"], "%v", got)
			require.Equal(t, "deployed", rolled["status"])
			d, err := c.Admin.AppsV1().Deployments(ns).Get(context.Background(), release, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, "registry.internal/web:1.0", d.Spec.Template.Spec.Containers[0].Image, "the release before is back")
		})
	}
}

// waitForOp polls an operation until done says so.
func waitForOp(t *testing.T, p *proc, op string, done func(map[string]any) bool) {
	t.Helper()
	q := `query($id: ID!) { operation(id: $id) { status nodeRuns { node status error attempts } evidence { producedBy item result source } } }`
	require.Eventually(t, func() bool {
		r := postAs(t, p, kubeAdmin, q, map[string]any{"id": op})
		return len(r.Errors) == 0 && done(r.Data["operation"].(map[string]any))
	}, 2*time.Minute, 200*time.Millisecond, "operation %s", op)
}

// helmEvidence is the helm runner's evidence item of an operation.
func helmEvidence(t *testing.T, op map[string]any) map[string]any {
	t.Helper()
	for _, e := range op["evidence"].([]any) {
		e := e.(map[string]any)
		if s := e["source"].(map[string]any); s["type"] == "helm" {
			return s
		}
	}
	t.Fatalf("no helm evidence: %v", op)
	return nil
}
