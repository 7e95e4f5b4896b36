package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGraphExplorerInABrowser runs web/console/e2e/explorer.mjs: the
// seed's story (scripts/demo-sim.sh) runs on a real server first, so that
// prod-tempo runs on prod-k8s and uses prod-vault through the bindings its
// plan chose; then Chromium walks the graph explorer: open prod-k8s,
// expand and collapse it, keyboard moves, a filter, find, bindings, the
// impact of its failure, the path from prod-tempo to prod-vault, and a
// live recolour when an assessment changes prod-tempo's health and again
// when the story's second install of it ends, in both themes with
// axe-core.
func TestGraphExplorerInABrowser(t *testing.T) {
	t.Parallel()
	dir, node := nodeProject(t, "web/console", "playwright-core")
	chromium := chromiumPath(t)
	data := t.TempDir()
	tokens := filepath.Join(data, "tokens.yaml")
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf(`tokens:
  - {token: %q, actor: alice, organization: demo, roles: [admin]}
  - {token: %q, actor: bob, organization: demo, roles: [sre]}
`, token, token+"-sre")), 0o600))
	p := start(t, filepath.Join(data, "data"), "--tokens", tokens)
	defer p.kill()

	runStory(t, p)

	shots := os.Getenv("CAPSTAN_SCREENSHOTS") // `make screenshots`: docs/console
	if shots == "" {
		shots = t.TempDir()
	}
	cmd := exec.Command(node, "e2e/explorer.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAPSTAN_URL="+p.url, "CAPSTAN_TOKEN="+token, "CHROMIUM="+chromium, "CAPSTAN_SCREENSHOTS="+shots)
	walked := runBrowserScript(t, cmd, map[string]func() string{"RUN-STORY": func() string { runStory(t, p); return "done" }})
	require.Contains(t, walked, "OK: ")
	for _, shot := range []string{"graph-explorer.png", "graph-explorer-dark.png"} {
		info, err := os.Stat(filepath.Join(shots, shot))
		require.NoError(t, err)
		require.Greater(t, info.Size(), int64(1000))
	}
	t.Logf("%s", walked)
}

// runStory runs the seed's story (scripts/demo-sim.sh) against p: an
// install of prod-tempo (in place when it exists) that binds prod-vault
// and a MinIO of its own, approved by the second person.
func runStory(t testing.TB, p *proc) {
	story := exec.Command("bash", filepath.Join("..", "..", "scripts", "demo-sim.sh"))
	story.Env = append(envWithout(capstanSettings), "CAPSTAN_URL="+p.url+"/graphql", "CAPSTAN_DEV_TOKEN="+token)
	out, err := combinedWithin(t, story, 3*time.Minute)
	require.NoError(t, err, out)
	require.Contains(t, out, "operation SUCCEEDED")
}

// TestConsoleUnderTrustedDocuments runs web/console/e2e/trusted.mjs: the
// console in Chromium against a server that enforces the console's
// trusted documents, as a viewer sending ids alone, and a viewer's
// hand-written query refused.
func TestConsoleUnderTrustedDocuments(t *testing.T) {
	t.Parallel()
	dir, node := nodeProject(t, "web/console", "playwright-core")
	chromium := chromiumPath(t)
	data := t.TempDir()
	tokens := filepath.Join(data, "tokens.yaml")
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf(`tokens:
  - {token: %q, actor: alice, organization: demo, roles: [admin]}
  - {token: %q, actor: victor, organization: demo, roles: [viewer]}
`, token, token+"-viewer")), 0o600))
	p := start(t, filepath.Join(data, "data"), "--tokens", tokens, "--trusted-documents", "console", "--trusted-documents-mode", "enforce")
	defer p.kill()
	// An operation for the dashboard's list (started by the admin: an
	// admin's documents are not held to the list).
	in := p.gql(t, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", scenario: "minio.install@1.0.0", desiredResult: {name: "trusted"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, nil)
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": in["createIntent"].(map[string]any)["id"]})
	p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["planIntent"].(map[string]any)["id"]})
	cmd := exec.Command(node, "e2e/trusted.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAPSTAN_URL="+p.url, "CAPSTAN_TOKEN="+token, "CAPSTAN_VIEWER_TOKEN="+token+"-viewer", "CHROMIUM="+chromium)
	out := runBrowserScript(t, cmd, nil)
	require.Contains(t, out, "OK: ")
	t.Logf("%s", out)
}
