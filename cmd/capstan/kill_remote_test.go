package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/testhosts"
)

// remoteKillPack runs two remote jobs one after the other on a test
// host: a non-idempotent one whose evidence is the one line it appends,
// then an idempotent one proven only once it has finished. Each writes to
// its output after its work, so that a copy orphaned by a dead server
// dies there (SIGPIPE) instead of finishing unseen.
const remoteKillPack = `id: remote-kill
version: 1.0.0
resource_types:
  - {key: kit, display_name: Kit, allowed_actions: [install]}
scenarios:
  - id: kit.install
    action: install
    target_resource_type: kit
    requires:
      - {id: host, capability: linux.host, strategy: existing, constraints: {name: "${intent.host}", environment: "${intent.environment}"}}
    plan:
      nodes:
        - id: once
          type: job
          title: Append a line, once
          requires: [host]
          job:
            run: {runner: ssh, target: host, script: 'echo run >> /root/once-runs; touch /root/once-started; sleep 3; echo finishing'}
            outputs: {evidence: [{name: appended-once, type: ssh_command, target: host, script: 'grep -c run /root/once-runs', output_pattern: '^1$'}]}
            controls: {idempotent: false}
        - id: again
          type: job
          title: Work that may run twice
          after: [once]
          requires: [host]
          job:
            run: {runner: ssh, target: host, script: 'echo run >> /root/again-runs; touch /root/again-started; sleep 3; echo finishing; touch /root/again-done'}
            outputs: {evidence: [{name: finished, type: ssh_command, target: host, script: 'test -e /root/again-done'}]}
            controls: {idempotent: true}
`

// TestSIGKILLDuringARemoteJob kills the real server while a
// non-idempotent remote job runs, and again while an idempotent one
// runs, on both stores: after each restart the first is recovered from
// its evidence on the host (never run again), and the second runs again
// over a new connection.
func TestSIGKILLDuringARemoteJob(t *testing.T) {
	t.Parallel()
	hosts := testhosts.Start(t, 1)
	h := hosts.Hosts[0]
	packs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(packs, "remote-kill.yaml"), []byte(remoteKillPack), 0o600))
	for store, args := range bothStores(t, "--egress-allow", "10.0.0.0/8", "--packs", packs) {
		t.Run(store, func(t *testing.T) {
			for _, f := range []string{"once-runs", "once-started", "again-runs", "again-started", "again-done"} {
				_ = os.Remove(filepath.Join(h.Root, "root", f))
			}
			dir := t.TempDir()
			p := start(t, dir, args...)
			org := p.gql(t, `{ viewer { organization } }`, nil)["viewer"].(map[string]any)["organization"].(string)
			p.gql(t, `mutation($v: String!) { putSecret(input: {name: "test-hosts-key", value: $v}) { name } }`, map[string]any{"v": string(hosts.ClientKey)})
			env := "kill-" + store
			p.gql(t, `mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": hosts.Catalog(org, env, "test-hosts-key")})
			in := p.gql(t, `mutation($h: String!, $e: String!) { createIntent(input: {action: "install", targetResourceType: "kit", desiredResult: {name: "kit"}, constraints: {environment: $e, host: $h}}) { id } }`,
				map[string]any{"h": h.Name, "e": env})["createIntent"].(map[string]any)["id"]
			plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": in})["planIntent"].(map[string]any)
			require.Equal(t, "READY", plan["status"], "%v", plan)
			op := p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)

			for _, started := range []string{"once-started", "again-started"} {
				require.Eventually(t, func() bool {
					_, err := os.Stat(filepath.Join(h.Root, "root", started))
					return err == nil
				}, 30*time.Second, 10*time.Millisecond, "never reached %s", started)
				require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
				<-p.done
				p = start(t, dir, args...)
			}
			waitForEnd(t, p, op)
			got := p.gql(t, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status attempts } timeline(first: 500) { edges { node { type payload } } } } }`, map[string]any{"id": op})["operation"].(map[string]any)
			require.Equal(t, "SUCCEEDED", got["status"], "%v", got)
			once, err := os.ReadFile(filepath.Join(h.Root, "root", "once-runs"))
			require.NoError(t, err)
			require.Equal(t, 1, strings.Count(string(once), "run"), "the non-idempotent remote job never ran again")
			again, err := os.ReadFile(filepath.Join(h.Root, "root", "again-runs"))
			require.NoError(t, err)
			require.Equal(t, 2, strings.Count(string(again), "run"), "the idempotent one ran again, over a new connection")
			recovered := false
			for _, e := range got["timeline"].(map[string]any)["edges"].([]any) {
				n := e.(map[string]any)["node"].(map[string]any)
				if n["type"] == "node.recovered" && n["payload"].(map[string]any)["node"] == "once" {
					recovered = true
				}
			}
			require.True(t, recovered, "the first job was recovered from its evidence on the host")
		})
	}
}
