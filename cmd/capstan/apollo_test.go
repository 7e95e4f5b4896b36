package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestApolloClientFollowsAnOperation runs web/livetest/follow.mjs, a real
// @apollo/client + graphql-ws dashboard client, against a real server: it
// subscribes to a running demo operation, approves its gate, and checks
// the timeline it received is complete and ordered. `make test` installs
// its npm dependencies (pinned in package-lock.json) first.
func TestApolloClientFollowsAnOperation(t *testing.T) {
	t.Parallel()
	dir, node := nodeProject(t, "web/livetest", "@apollo/client")

	p := start(t, t.TempDir())
	in := p.gql(t, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", scenario: "minio.install@1.0.0", desiredResult: {name: "apollo"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, nil)
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": in["createIntent"].(map[string]any)["id"]})
	op := p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["planIntent"].(map[string]any)["id"]})["startOperation"].(map[string]any)["id"].(string)

	cmd := exec.Command(node, "follow.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAPSTAN_URL="+p.url, "CAPSTAN_TOKEN="+token, "CAPSTAN_SRE_TOKEN="+token+"-sre", "CAPSTAN_OPERATION="+op)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "OK: ")
	t.Logf("%s", out)
}

// nodeProject is a JavaScript project of the repository (rel) with its
// dependencies installed (pkg one of them) and the node binary to run it.
func nodeProject(t testing.TB, rel, pkg string) (dir, node string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("../..", rel))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "node_modules", pkg))
	require.NoError(t, err, "%s's dependencies are missing: run `make js-deps` (npm ci in %s)", rel, rel)
	node, err = exec.LookPath("node")
	require.NoError(t, err, "Node.js 20+ is needed to run %s", rel)
	return dir, node
}

// TestApolloClientPersistedQueries runs web/livetest/apq.mjs: the real
// Apollo Client's persisted-query link against a real server, with the
// console's heaviest query. It logs the bytes each request took with and
// without APQ.
func TestApolloClientPersistedQueries(t *testing.T) {
	t.Parallel()
	dir, node := nodeProject(t, "web/livetest", "@apollo/client")
	p := start(t, t.TempDir())
	id := p.gql(t, `{ resource(key: "kubernetes.cluster/prod-k8s") { id } }`, nil)["resource"].(map[string]any)["id"].(string)
	cmd := exec.Command(node, "apq.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAPSTAN_URL="+p.url, "CAPSTAN_TOKEN="+token, "CAPSTAN_RESOURCE="+id)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "OK: ")
	t.Logf("%s", out)
}

// TestGatewaySupergraph runs web/federation/gateway.mjs: Capstan's
// subgraph composed (@apollo/composition) with a team directory written
// for the test, served by a real @apollo/gateway that forwards the
// caller's token. A query crossing both subgraphs returns the right data;
// another organization's token gets nothing of the first, through the
// gateway's _entities calls; it logs the p50 direct and through the
// gateway.
func TestGatewaySupergraph(t *testing.T) {
	t.Parallel()
	dir, node := nodeProject(t, "web/federation", "@apollo/gateway")
	data := t.TempDir()
	tokens := filepath.Join(data, "tokens.yaml")
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf(`tokens:
  - {token: %q, actor: alice, organization: demo, roles: [admin]}
  - {token: %q, actor: mallory, organization: rival, roles: [admin]}
`, token, token+"-rival")), 0o600))
	p := start(t, filepath.Join(data, "data"), "--tokens", tokens, "--introspection", "on")
	defer p.kill()
	// A production MinIO install waits at its gate: the resource has an
	// operation running.
	op := runIntent(t, p, `{action: "install", targetResourceType: "minio.instance", scenario: "minio.install@1.0.0", desiredResult: {name: "fed"}, constraints: {environment: "prod", cluster: "prod-k8s"}}`)
	waitForGate(t, p, op, "approve-prod-storage")
	rounds := "200"
	if testing.Short() {
		rounds = "20"
	}
	cmd := exec.Command(node, "gateway.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAPSTAN_URL="+p.url, "CAPSTAN_TOKEN="+token, "CAPSTAN_OTHER_TOKEN="+token+"-rival",
		"CAPSTAN_RESOURCE=minio.instance/fed", "CAPSTAN_ROUNDS="+rounds)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "OK: ")
	t.Logf("%s", out)
}

// runIntent creates, plans and starts an intent as the test's admin and
// returns the operation's id.
func runIntent(t *testing.T, p *proc, input string) string {
	in := p.gql(t, `mutation { createIntent(input: `+input+`) { id } }`, nil)
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": in["createIntent"].(map[string]any)["id"]})
	return p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["planIntent"].(map[string]any)["id"]})["startOperation"].(map[string]any)["id"].(string)
}
