package main_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostilePack's job tries, inside a real server's sandbox, everything a
// pack author's script should not get: the server's environment, its
// tokens file and data directory, the control plane's own port, its
// processes. It ends well so the operation goes on.
func hostilePack(tokens, data string, port int) string {
	return fmt.Sprintf(`id: hostile
version: 1.0.0
scenarios:
  - id: thing.hostile
    action: install
    target_resource_type: thing
    plan:
      nodes:
        - id: snoop
          type: job
          title: Snoop
          job:
            run:
              runner: shell
              script: |
                echo "== env"; env
                echo "== init"; tr '\0' ' ' < /proc/1/cmdline; echo; ls /proc | grep -cE '^[0-9]+$'
                echo "== tokens"; cat %[1]q
                echo "== data"; ls -la %[2]q; head -c 64 %[2]q/capstan.db | od -c | head -2
                echo "== port"; (exec 3<>/dev/tcp/127.0.0.1/%[3]d && echo "REACHED-PLANE-$((40+2))")
                echo "== kill"; kill -9 -1; echo "still here"
                exit 0
            outputs: {evidence: [{name: done, type: command, script: 'true'}]}
`, tokens, data, port)
}

func TestHostileJobInARealServer(t *testing.T) {
	t.Parallel()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	tokens := filepath.Join(dir, "tokens.yaml")
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf(`tokens:
  - {token: %q, actor: alice, organization: acme, roles: [admin]}
`, attackAdmin)), 0o644)) // even world-readable, the job must not read it
	packs := filepath.Join(dir, "packs")
	require.NoError(t, os.MkdirAll(packs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(packs, "hostile.yaml"), []byte(hostilePack(tokens, data, port)), 0o644))
	p := launchWith(t, withEnv("CAPSTAN_NEO4J_PASSWORD=neo4j-password-of-the-server"), data, "--tokens", tokens, "--packs", packs, "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	p.waitReady(t, 60*time.Second)

	run := func() string {
		in := postAs(t, p, attackAdmin, `mutation { createIntent(input: {action: "install", targetResourceType: "thing", desiredResult: {name: "h"}, constraints: {environment: "dev"}}) { id } }`, nil)
		plan := postAs(t, p, attackAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": in.Data["createIntent"].(map[string]any)["id"]})
		op := postAs(t, p, attackAdmin, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan.Data["planIntent"].(map[string]any)["id"]})
		id := op.Data["startOperation"].(map[string]any)["id"].(string)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			got := postAs(t, p, attackAdmin, `query($op: ID!) { operation(id: $op) { status } }`, map[string]any{"op": id})
			if s := got.Data["operation"].(map[string]any)["status"].(string); s == "SUCCEEDED" || s == "FAILED" {
				return s
			}
		}
		t.Fatal("the operation did not end")
		return ""
	}
	require.Equal(t, "SUCCEEDED", run())

	logs, err := filepath.Glob(filepath.Join(data, "executor", "artifacts", "*", "diagnostics.log"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	out, err := os.ReadFile(logs[0])
	require.NoError(t, err)
	text := string(out)
	require.Contains(t, text, "== env", "the job ran: %s", text)
	for _, leak := range []string{"neo4j-password-of-the-server", attackAdmin, "CAPSTAN_NEO4J", "CAPSTAN_DEV_TOKEN", "REACHED-PLANE-42", "capstan serve", "bolt"} {
		require.NotContains(t, text, leak)
	}
	require.Contains(t, text, "HOME=/tmp/job")
	require.True(t, strings.Contains(text, "No such file") || strings.Contains(text, "Permission denied"), text)
	healthy(t, p)
	require.Equal(t, "SUCCEEDED", run(), "the server and the next operation are unaffected")
}
