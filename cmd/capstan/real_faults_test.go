package main_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/testhosts"
)

// TestRemoteFaultsOnBothStores runs remote jobs through GraphQL against
// hosts that fail as real ones do, on both stores: a host presenting
// another key than the pinned one (refused, never retried), an address
// nobody answers and a host that accepts the connection and then says
// nothing (each attempt ended by the dial timeout, the retry policy
// applied, typed unreachable), sshd killed in the middle of a job (the
// attempt fails, the policy retries it over a new connection, the job
// succeeds), and a job printing a megabyte a second (its output bounded).
func TestRemoteFaultsOnBothStores(t *testing.T) {
	t.Parallel()
	// A host that accepts connections and never speaks.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var held sync.WaitGroup
	var conns []net.Conn
	var mu sync.Mutex
	held.Add(1)
	go func() {
		defer held.Done()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		silent.Close()
		held.Wait()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	silentPort := silent.Addr().(*net.TCPAddr).Port
	node := func(name, address string, port int, hostKey string) string {
		return fmt.Sprintf("  - {name: %s, environment: lab, os: debian, ssh_user: root, address: %q, ssh_port: %d, ssh_host_key: %q, ssh_private_key: \"secret:test-hosts-key\", health: healthy}\n",
			name, address, port, hostKey)
	}
	pack, err := os.ReadFile(filepath.Join("testdata", "faults-test.yaml"))
	require.NoError(t, err)

	for store, args := range bothStores(t, "--egress-allow", "10.0.0.0/8,127.0.0.1/32") {
		t.Run(store, func(t *testing.T) {
			t.Parallel() // each store's run has a host of its own
			hosts := testhosts.Start(t, 1)
			h := hosts.Hosts[0]
			otherKey, err := os.ReadFile(filepath.Join(hosts.Dir, "client_ed25519.pub"))
			require.NoError(t, err)
			nowhere := h.Address[:strings.LastIndexByte(h.Address, '.')] + ".77"
			dir := t.TempDir()
			p := start(t, dir, args...)
			org := p.gql(t, `{ viewer { organization } }`, nil)["viewer"].(map[string]any)["organization"].(string)
			p.gql(t, `mutation($v: String!) { putSecret(input: {name: "test-hosts-key", value: $v}) { name } }`, map[string]any{"v": string(hosts.ClientKey)})
			catalog := "organization: " + org + "\nenvironments: [lab]\ncompute_nodes:\n" +
				node(h.Name, h.Address, h.Port, h.HostKey) +
				node("wrongkey", h.Address, h.Port, strings.TrimSpace(string(otherKey))) +
				node("nowhere", nowhere, 22, h.HostKey) +
				node("silent", "127.0.0.1", silentPort, h.HostKey)
			p.gql(t, `mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": catalog})
			p.gql(t, `mutation($y: String!) { installScenarioPack(input: {document: $y}) { id } }`, map[string]any{"y": string(pack)})
			start := func(scenario, name, host string) string {
				in := p.gql(t, `mutation($s: String!, $n: String!, $h: String!) { createIntent(input: {action: "install", targetResourceType: "test.fault", scenario: $s,
				  desiredResult: {name: $n}, constraints: {host: $h}}) { id } }`, map[string]any{"s": scenario, "n": name, "h": host})["createIntent"].(map[string]any)["id"]
				plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": in})["planIntent"].(map[string]any)
				require.Equal(t, "READY", plan["status"], "%v", plan)
				return p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
			}
			run := func(op string) (string, map[string]any) {
				waitForEnd(t, p, op)
				got := p.gql(t, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status attempts error } artifacts { name type storageRef } } }`, map[string]any{"id": op})["operation"].(map[string]any)
				return got["status"].(string), got["nodeRuns"].([]any)[0].(map[string]any)
			}

			// Another key than the pinned one: refused at once, never retried.
			status, nr := run(start("faults-test.touch", "wrongkey", "wrongkey"))
			require.Equal(t, "FAILED", status)
			require.Equal(t, 1.0, nr["attempts"], "a wrong host key is not retried: %v", nr)
			require.Contains(t, nr["error"], "is not the one pinned in the catalog")

			// Nobody answers; a host accepts and then says nothing: each
			// attempt ends at the dial timeout, and the policy retries once.
			for _, host := range []string{"nowhere", "silent"} {
				began := time.Now()
				status, nr = run(start("faults-test.touch", host, host))
				require.Equal(t, "FAILED", status, host)
				require.Equal(t, 2.0, nr["attempts"], "%s: retried by the policy: %v", host, nr)
				require.Contains(t, nr["error"], "compute.node/"+host, "%v", nr)
				require.Less(t, time.Since(began), 60*time.Second, "%s: the timeouts end it", host)
			}

			// sshd killed in the middle of the job: retried, reconnects.
			slow := start("faults-test.slow", "slow", h.Name)
			require.Eventually(t, func() bool { // the job has begun its four seconds on the host
				_, err := os.Stat(filepath.Join(h.Root, "srv", "slow-started"))
				return err == nil
			}, 30*time.Second, 50*time.Millisecond)
			hosts.KillSSHD(t, 0)
			hosts.StartSSHD(t, 0)
			status, nr = run(slow)
			require.Equal(t, "SUCCEEDED", status, "%v", nr)
			require.GreaterOrEqual(t, nr["attempts"], 2.0, "the attempt the kill cut was retried: %v", nr)

			// A megabyte a second: what is kept of its output is bounded.
			loud := start("faults-test.loud", "loud", h.Name)
			status, nr = run(loud)
			require.Equal(t, "SUCCEEDED", status, "%v", nr)
			arts := p.gql(t, `query($id: ID!) { operation(id: $id) { artifacts { name storageRef } } }`, map[string]any{"id": loud})["operation"].(map[string]any)["artifacts"].([]any)
			require.NotEmpty(t, arts)
			for _, a := range arts { // file:<path>#<from>-<to>: the bytes of the diagnostics log it holds
				ref := a.(map[string]any)["storageRef"].(string)
				path, span, ok := strings.Cut(strings.TrimPrefix(ref, "file:"), "#")
				require.True(t, ok, ref)
				from, to, _ := strings.Cut(span, "-")
				a, errA := strconv.Atoi(from)
				b, errB := strconv.Atoi(to)
				require.NoError(t, errA)
				require.NoError(t, errB)
				require.Less(t, b-a, 80<<10, "%s keeps at most 64 KiB of the 4 MiB printed", ref)
				fi, err := os.Stat(filepath.Join(dir, "executor", path))
				require.NoError(t, err, ref)
				require.Less(t, fi.Size(), int64(160<<10), "the diagnostics log holds the job's and the probe's bounded output")
			}
		})
	}
}
