package main_test

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// consolePack gives the browser test a secret to keep masked: a staging
// job mints a token as a secret artifact.
const consolePack = `id: console
version: 1.0.0
scenarios:
  - id: thing.minted
    action: install
    target_resource_type: thing
    plan:
      nodes:
        - id: mint
          type: job
          title: Mints a token
          job:
            run:
              runner: shell
              script: echo "tok-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$CAPSTAN_OUTPUTS/token"
            outputs:
              artifacts: [{name: token, type: credential, sensitivity: secret}]
              evidence: [{name: token-minted, type: command, script: 'test -s "$CAPSTAN_OUTPUTS/token"', expect_exit: 0}]
`

// consoleServer is the browser test's server: a tokens file (alice admin,
// bob and carol sre, victor viewer), the console pack, and three operations — a
// production install waiting at its gate, the seed's kubernetes cluster
// (whose failure the analyzer answers with a patch) and a finished staging
// install with a secret artifact.
type consoleServer struct {
	p                   *proc
	data, tokens, packs string
	gated, withToken    string
}

func startConsoleServer(t *testing.T) *consoleServer {
	dir := t.TempDir()
	c := &consoleServer{data: filepath.Join(dir, "data"), tokens: filepath.Join(dir, "tokens.yaml"), packs: filepath.Join(dir, "packs")}
	require.NoError(t, os.WriteFile(c.tokens, []byte(fmt.Sprintf(`tokens:
  - {token: %q, actor: alice, organization: demo, roles: [admin]}
  - {token: %q, actor: bob, organization: demo, roles: [sre]}
  - {token: %q, actor: carol, organization: demo, roles: [sre]}
  - {token: %q, actor: victor, organization: demo, roles: [viewer]}
`, token, token+"-sre", token+"-sre2", token+"-viewer")), 0o600))
	require.NoError(t, os.MkdirAll(c.packs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(c.packs, "console.yaml"), []byte(consolePack), 0o644))
	c.p = start(t, c.data, "--tokens", c.tokens, "--packs", c.packs)
	c.gated = c.run(t, `{action: "install", targetResourceType: "minio.instance", scenario: "minio.install@1.0.0", desiredResult: {name: "console"}, constraints: {environment: "prod", cluster: "prod-k8s"}}`)
	waitForGate(t, c.p, c.gated, "approve-prod-storage")
	c.withToken = c.run(t, `{action: "install", targetResourceType: "thing", desiredResult: {name: "minted"}, constraints: {environment: "staging"}}`)
	waitForEnd(t, c.p, c.withToken)
	ended := c.p.gql(t, `query($id: ID!) { operation(id: $id) { status progress { needsAttention } } }`, map[string]any{"id": c.withToken})
	require.Equal(t, "SUCCEEDED", ended["operation"].(map[string]any)["status"], "%v", ended)
	return c
}

// startSeedCluster starts the seed's kubernetes cluster, whose failed
// init-control-plane the analyzer answers with a patch proposal.
func (c *consoleServer) startSeedCluster(t *testing.T) string {
	return c.run(t, `{action: "create", targetResourceType: "kubernetes.cluster", mode: ADVANCED, desiredResult: {name: "console-k8s"}, constraints: {environment: "prod"}, providers: [{requirement: "hosts", provider: "compute.node/prod-worker-3"}]}`)
}

// run creates, plans and starts an intent (as alice) and returns the
// operation's id.
func (c *consoleServer) run(t *testing.T, input string) string {
	in := c.p.gql(t, `mutation { createIntent(input: `+input+`) { id } }`, nil)
	plan := c.p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": in["createIntent"].(map[string]any)["id"]})
	return c.p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["planIntent"].(map[string]any)["id"]})["startOperation"].(map[string]any)["id"].(string)
}

// crash kills the server with SIGKILL and starts it again on the same
// address and data: the browser's connection drops and comes back.
func (c *consoleServer) crash(t *testing.T) {
	u, err := url.Parse(c.p.url)
	require.NoError(t, err)
	c.p.kill()
	c.p = start(t, c.data, "--tokens", c.tokens, "--packs", c.packs, "--listen", u.Host)
}

// TestConsoleInABrowser runs web/console/e2e/console.mjs: playwright-core
// drives Debian's Chromium through the console served by a real server —
// sign-in, the live dashboard, an operation's DAG, gate drawer and
// timeline (which resumes from its cursor across a kill -9 of the
// server), a patch approved as the second person with its diff, one
// proposed and reverted, plan review, the explorer, a viewer without
// buttons and a secret that stays masked, accessibility rules on every
// page, sign-out. `make test` installs the console's npm dependencies
// (pinned) first.
func TestConsoleInABrowser(t *testing.T) {
	t.Parallel()
	dir, node := nodeProject(t, "web/console", "playwright-core")
	chromium := chromiumPath(t)
	c := startConsoleServer(t)
	shots := os.Getenv("CAPSTAN_SCREENSHOTS") // `make screenshots`: docs/console
	if shots == "" {
		shots = t.TempDir()
	}
	cmd := exec.Command(node, "e2e/console.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAPSTAN_URL="+c.p.url, "CAPSTAN_TOKEN="+token, "CAPSTAN_SRE_TOKEN="+token+"-sre", "CAPSTAN_SRE2_TOKEN="+token+"-sre2",
		"CAPSTAN_VIEWER_TOKEN="+token+"-viewer", "CAPSTAN_OPERATION="+c.gated,
		"CAPSTAN_SECRET_OPERATION="+c.withToken, "CHROMIUM="+chromium, "CAPSTAN_SCREENSHOTS="+shots)
	out := runBrowserScript(t, cmd, map[string]func() string{
		"CRASH-SERVER":       func() string { c.crash(t); return "done" },
		"START-SEED-CLUSTER": func() string { return c.startSeedCluster(t) },
	})
	require.Contains(t, out, "OK: ")
	for _, shot := range []string{"dashboard.png", "dashboard-live.png", "operation-dag.png", "operation-stages.png", "patch-diff.png", "plan-review.png", "explorer.png", "timeline.png", "dashboard-dark.png", "operation-dark.png"} {
		info, err := os.Stat(filepath.Join(shots, shot))
		require.NoError(t, err)
		require.Greater(t, info.Size(), int64(1000))
	}
	t.Logf("%s", out)
}

func chromiumPath(t testing.TB) string {
	if c := os.Getenv("CHROMIUM"); c != "" {
		return c
	}
	c, err := exec.LookPath("chromium")
	require.NoError(t, err, "the console test needs Chromium: apt-get install chromium (or set CHROMIUM)")
	return c
}

// runBrowserScript runs a node script and answers its requests: a line on
// its stdout naming one of actions runs it, and what it returns goes to
// the script's stdin as a line.
// It returns everything the script printed, and fails the test when the
// script fails.
//
// The script (and the Chromium it drives, in its process group) is killed
// when it runs past ten minutes or when the test ends early (a failed
// action): nothing outlives the test.
func runBrowserScript(t testing.TB, cmd *exec.Cmd, actions map[string]func() string) string {
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	require.NoError(t, cmd.Start())
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	t.Cleanup(kill)
	deadline := time.AfterFunc(10*time.Minute, kill)
	defer deadline.Stop()
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if act, ok := actions[strings.TrimSpace(line)]; ok {
			_, _ = io.WriteString(stdin, act()+"\n")
		}
	}
	scanErr := sc.Err()
	err = cmd.Wait()
	require.NoError(t, err, "%s\n%s", out.String(), stderr.String())
	require.NoError(t, scanErr)
	return out.String() + stderr.String()
}
