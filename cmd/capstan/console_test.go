package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConsoleInABrowser runs web/console/e2e/console.mjs: playwright-core
// drives Debian's Chromium through the console served by a real server —
// sign-in, the viewer, the live dashboard, an operation's DAG and gate
// drawer (refused to its starter and to a viewer, each with the reason),
// following it to SUCCEEDED after a second person approves, sign-out. `make test`
// installs the console's npm dependencies (pinned) first.
func TestConsoleInABrowser(t *testing.T) {
	dir, node := nodeProject(t, "web/console", "playwright-core")
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		var err error
		chromium, err = exec.LookPath("chromium")
		require.NoError(t, err, "the console test needs Chromium: apt-get install chromium (or set CHROMIUM)")
	}

	data := t.TempDir()
	tokens := filepath.Join(data, "tokens.yaml")
	viewerToken := token + "-viewer"
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf(`tokens:
  - {token: %q, actor: alice, organization: demo, roles: [admin]}
  - {token: %q, actor: bob, organization: demo, roles: [sre]}
  - {token: %q, actor: victor, organization: demo, roles: [viewer]}
`, token, token+"-sre", viewerToken)), 0o600))
	p := start(t, filepath.Join(data, "data"), "--tokens", tokens)
	in := p.gql(t, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", desiredResult: {name: "console"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, nil)
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": in["createIntent"].(map[string]any)["id"]})
	op := p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["planIntent"].(map[string]any)["id"]})["startOperation"].(map[string]any)["id"].(string)
	waitForGate(t, p, op, "approve-prod-storage")

	shots := os.Getenv("CAPSTAN_SCREENSHOTS") // `make screenshots`: docs/console
	if shots == "" {
		shots = t.TempDir()
	}
	cmd := exec.Command(node, "e2e/console.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAPSTAN_URL="+p.url, "CAPSTAN_TOKEN="+token, "CAPSTAN_SRE_TOKEN="+token+"-sre",
		"CAPSTAN_VIEWER_TOKEN="+viewerToken, "CAPSTAN_OPERATION="+op, "CHROMIUM="+chromium, "CAPSTAN_SCREENSHOTS="+shots)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "OK: ")
	for _, shot := range []string{"dashboard.png", "dashboard-live.png"} {
		info, err := os.Stat(filepath.Join(shots, shot))
		require.NoError(t, err)
		require.Greater(t, info.Size(), int64(1000))
	}
	t.Logf("%s", out)
}
