package main_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/internal/kubetest"
	"github.com/capstan-dev/capstan/pack"
	"github.com/capstan-dev/capstan/packs"
)

const (
	kubeAdmin = "kube-admin-token-0123456789"
	kubeSRE   = "kube-sre-token-0123456789"
)

// kubeCatalog registers the test cluster as name in env of org, reached
// with the token a secret named secretName holds.
func kubeCatalog(c *kubetest.Cluster, org, name, env, secretName string) string {
	return fmt.Sprintf("organization: %s\nenvironments: [%s]\nclusters:\n  - {name: %s, environment: %s, health: healthy, api_server: %q, credentials: \"secret:%s\", ca: %q}\n",
		org, env, name, env, c.Server, secretName, string(c.CA))
}

// TestANamespaceIsMadeAndDeletedOnARealCluster is the kubernetes pack's
// namespace lifecycle on both stores, against the run's real API server:
// the grant the packs declare (capstan cluster rbac) is given to a
// ServiceAccount, the cluster is registered with its pinned CA and that
// account's token, and a namespace is created with its quota and limits
// by server-side apply, proven by probes that read the objects back (the
// evidence carries the live uid); then deleted after a second person
// approves. In between, a health assessment reads the namespace and its
// quota on the cluster: HEALTHY, then DEGRADED once the quota is deleted
// by hand. A cluster whose token has no grant fails the step FORBIDDEN,
// with the API server's words.
func TestANamespaceIsMadeAndDeletedOnARealCluster(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	token := bundledGrant(t, c, "capstan")
	weak := c.Token(t, c.Namespace(t, "capstan-weak"), nil, nil)
	for store, args := range bothStores(t, "--egress-allow", "127.0.0.1/32") {
		t.Run(store, func(t *testing.T) {
			env := "lab-" + store
			lab := startKubeLab(t, c, env, token, args...)
			p, ok := lab.p, lab.ok
			lab.putSecret("weak-k8s-token", weak)
			ok(kubeAdmin, `mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": kubeCatalog(c, "acme", "weak-k8s", env, "weak-k8s-token")})
			ns := fmt.Sprintf("team-%s-%d", store, p.cmd.Process.Pid)

			op := startNamespaceOp(t, p, "create", ns, "lab-k8s", env)
			waitForEndAs(t, p, kubeAdmin, op)
			got := ok(kubeAdmin, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status error } evidence { item result source } } }`, map[string]any{"id": op})["operation"].(map[string]any)
			require.Equal(t, "SUCCEEDED", got["status"], "%v", got)
			live, err := c.Admin.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, "capstan", live.Labels["app.kubernetes.io/managed-by"])
			quota, err := c.Admin.CoreV1().ResourceQuotas(ns).Get(context.Background(), "capstan-quota", metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, "50", quota.Spec.Hard.Pods().String())
			evidence := map[string]map[string]any{}
			for _, e := range got["evidence"].([]any) {
				e := e.(map[string]any)
				evidence[e["item"].(string)] = e
			}
			active := evidence["namespace-active"]
			require.NotNil(t, active, "%v", evidence)
			require.Equal(t, "PASSED", active["result"])
			require.Equal(t, string(live.UID), active["source"].(map[string]any)["uid"], "the evidence names the live namespace")
			require.Equal(t, "50", fmt.Sprint(evidence["quota-set"]["source"].(map[string]any)["observed"]))
			require.Equal(t, "created", evidence["namespace-"+ns+"-created"]["source"].(map[string]any)["action"], "the runner's own record of the apply: %v", evidence)

			// A health assessment reads the namespace and its quota on the
			// cluster; a quota deleted by hand makes it DEGRADED.
			id := ok(kubeAdmin, `query($k: String!) { resource(key: $k) { id } }`, map[string]any{"k": "kubernetes.namespace/" + ns})["resource"].(map[string]any)["id"]
			assess := func() map[string]any {
				t.Helper()
				return ok(kubeAdmin, `mutation($r: ID!) { assessResource(input: {resource: $r}) { healthStatus assessment { reason evidence { item result source } } } }`, map[string]any{"r": id})["assessResource"].(map[string]any)
			}
			healthy := assess()
			require.Equal(t, "HEALTHY", healthy["healthStatus"], "%v", healthy)
			require.Equal(t, string(live.UID), healthy["assessment"].(map[string]any)["evidence"].([]any)[0].(map[string]any)["source"].(map[string]any)["uid"])
			require.NoError(t, c.Admin.CoreV1().ResourceQuotas(ns).Delete(context.Background(), "capstan-quota", metav1.DeleteOptions{}))
			degraded := assess()
			require.Equal(t, "DEGRADED", degraded["healthStatus"], "%v", degraded)
			require.Contains(t, degraded["assessment"].(map[string]any)["reason"], "quota-set")

			// Deleting it waits for a second person.
			del := startNamespaceOp(t, p, "delete", ns, "lab-k8s", env)
			waitForStatusAs(t, p, kubeAdmin, del, "WAITING")
			ok(kubeSRE, `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve-delete", approve: true}) { status } }`, map[string]any{"op": del})
			waitForEndAs(t, p, kubeAdmin, del)
			require.Equal(t, "SUCCEEDED", statusAs(t, p, kubeAdmin, del))
			_, err = c.Admin.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
			require.Error(t, err, "the namespace is gone")

			// A cluster whose identity was granted nothing: FORBIDDEN.
			refused := startNamespaceOp(t, p, "create", ns+"-weak", "weak-k8s", env)
			waitForEndAs(t, p, kubeAdmin, refused)
			got = ok(kubeAdmin, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status error } } }`, map[string]any{"id": refused})["operation"].(map[string]any)
			require.Equal(t, "FAILED", got["status"], "%v", got)
			var nodeErr string
			for _, nr := range got["nodeRuns"].([]any) {
				if e, _ := nr.(map[string]any)["error"].(string); e != "" {
					nodeErr = e
				}
			}
			require.Contains(t, nodeErr, "FORBIDDEN", "%v", got)
			require.Contains(t, nodeErr, `cannot get resource "namespaces"`, "the API server's own words")
			_, err = c.Admin.CoreV1().Namespaces().Get(context.Background(), ns+"-weak", metav1.GetOptions{})
			require.Error(t, err, "nothing was made")
		})
	}
}

// startNamespaceOp plans and starts an action on a namespace of cluster.
func startNamespaceOp(t *testing.T, p *proc, action, name, cluster, env string) string {
	t.Helper()
	r := postAs(t, p, kubeAdmin, `mutation($a: String!, $n: String!, $c: String!, $e: String!) { createIntent(input: {action: $a, targetResourceType: "kubernetes.namespace", desiredResult: {name: $n}, constraints: {environment: $e, cluster: $c}}) { id } }`,
		map[string]any{"a": action, "n": name, "c": cluster, "e": env})
	require.Empty(t, r.Errors, "%v", r.Errors)
	r = postAs(t, p, kubeAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": r.Data["createIntent"].(map[string]any)["id"]})
	require.Empty(t, r.Errors, "%v", r.Errors)
	plan := r.Data["planIntent"].(map[string]any)
	require.Equal(t, "READY", plan["status"], "%v", plan)
	r = postAs(t, p, kubeAdmin, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})
	require.Empty(t, r.Errors, "%v", r.Errors)
	return r.Data["startOperation"].(map[string]any)["id"].(string)
}

// waitForStatusAs waits until an operation has status want.
func waitForStatusAs(t *testing.T, p *proc, bearer, op, want string) {
	t.Helper()
	require.Eventually(t, func() bool { return statusAs(t, p, bearer, op) == want }, 2*time.Minute, 100*time.Millisecond, "operation %s never %s", op, want)
}

// bundledGrant is the token of an identity granted, cluster-wide, what
// the bundled packs' rbac asks (capstan cluster rbac), and extra.
func bundledGrant(t *testing.T, c *kubetest.Cluster, prefix string, extra ...rbacv1.PolicyRule) string {
	t.Helper()
	bundled, problems := pack.LoadSet(packs.FS, packs.Order, nil)
	require.Empty(t, problems)
	return c.Token(t, c.Namespace(t, prefix), nil, append(kube.Rules(bundled), extra...))
}

// kubeLab is a server of organization acme (alice admin, sam sre) with
// the flags args, its secret lab-k8s-token holding token, and its
// catalog registering cluster c as lab-k8s in environment env.
type kubeLab struct {
	t   *testing.T
	p   *proc
	env string
}

func startKubeLab(t *testing.T, c *kubetest.Cluster, env, token string, args ...string) *kubeLab {
	t.Helper()
	dir := t.TempDir()
	tokens := tokensFile(t, dir, "alice acme admin "+kubeAdmin, "sam acme sre "+kubeSRE)
	l := &kubeLab{t: t, p: start(t, dir, append([]string{"--tokens", tokens}, args...)...), env: env}
	l.putSecret("lab-k8s-token", token)
	l.ok(kubeAdmin, `mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": kubeCatalog(c, "acme", "lab-k8s", env, "lab-k8s-token")})
	return l
}

// ok posts q as bearer and returns its data; an error fails the test.
func (l *kubeLab) ok(bearer, q string, vars map[string]any) map[string]any {
	l.t.Helper()
	r := postAs(l.t, l.p, bearer, q, vars)
	require.Empty(l.t, r.Errors, "%v", r.Errors)
	return r.Data
}

func (l *kubeLab) putSecret(name, value string) {
	l.t.Helper()
	l.ok(kubeAdmin, `mutation($n: String!, $v: String!) { putSecret(input: {name: $n, value: $v}) { name } }`, map[string]any{"n": name, "v": value})
}
