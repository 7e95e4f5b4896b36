package main_test

import (
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/testenv"
)

// TestWatchFollowsAcrossAServerRestart runs `capstan watch` against a real
// server, restarts the server mid-operation (a dropped connection), and
// checks the watcher resumed from its cursor: every event printed once, in
// order, and it exits 0 when the operation succeeds.
func TestWatchFollowsAcrossAServerRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := start(t, dir)
	in := p.gql(t, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", scenario: "minio.install@1.0.0", desiredResult: {name: "watched"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, nil)
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": in["createIntent"].(map[string]any)["id"]})
	op := p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["planIntent"].(map[string]any)["id"]})["startOperation"].(map[string]any)["id"].(string)

	var out, errOut testenv.SyncBuffer
	w := exec.Command(binary, "watch", "--server", p.url, "--token", token, op)
	w.Stdout, w.Stderr = &out, &errOut
	require.NoError(t, w.Start())
	exited := make(chan error, 1)
	go func() { exited <- w.Wait() }()
	t.Cleanup(func() { _ = w.Process.Kill() })
	waitOutput(t, &out, "gate approve-prod-storage waits")

	u, err := url.Parse(p.url)
	require.NoError(t, err)
	p.stop(t)
	p = start(t, dir, "--listen", u.Host)
	waitOutput(t, &errOut, "reconnecting from cursor")

	approveStorage(t, p, op)
	select {
	case err := <-exited:
		require.NoError(t, err, "exit 0 when the operation succeeds\n%s\n%s", out.String(), errOut.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("watch did not end:\n%s\n%s", out.String(), errOut.String())
	}
	var seqs []int
	line := regexp.MustCompile(`^\s*(\d+) \d\d:\d\d:\d\d `)
	for _, l := range strings.Split(out.String(), "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			seqs = append(seqs, n)
		}
	}
	for i, s := range seqs {
		require.Equal(t, i+1, s, "every event once, in order, across the restart:\n%s", out.String())
	}
	require.Contains(t, out.String(), "operation.succeeded")
	require.Contains(t, out.String(), "── SUCCEEDED")
}

func waitOutput(t *testing.T, b *testenv.SyncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(b.String(), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("never saw %q in:\n%s", want, b.String())
}

// approveStorage approves the MinIO prod gate as the second (sre) approver.
func approveStorage(t *testing.T, p *proc, op string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, errs := p.tryAs(t, token+"-sre", `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve-prod-storage", approve: true}) { status } }`, map[string]any{"op": op})
		return len(errs) == 0
	}, 20*time.Second, 50*time.Millisecond)
}

// TestWatchFailsAtOnceWhenRefused: a rejected or missing token ends
// `capstan watch` at once with a clear message and a non-zero exit; only
// what can heal (a dropped connection, OVERFLOW, UNAVAILABLE) is retried.
func TestWatchFailsAtOnceWhenRefused(t *testing.T) {
	t.Parallel()
	p := start(t, t.TempDir())
	for name, args := range map[string][]string{
		"rejected token":    {"--token", "not-a-token-0123456789"},
		"missing token":     {},
		"unknown operation": {"--token", token},
	} {
		t.Run(name, func(t *testing.T) {
			began := time.Now()
			cmd := exec.Command(binary, append(append([]string{"watch", "--server", p.url}, args...), "T3BlcmF0aW9uOm5vbmU")...)
			cmd.Env = []string{"PATH=/usr/bin:/bin"} // no CAPSTAN_TOKEN from the environment
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "%s", out)
			require.Less(t, time.Since(began), 5*time.Second, "no retries: %s", out)
			require.NotContains(t, string(out), "reconnecting", "nothing to retry")
			switch name {
			case "rejected token":
				require.Contains(t, string(out), "refused the connection")
			case "missing token":
				require.Contains(t, string(out), "no token")
			default:
				require.Contains(t, string(out), "NOT_FOUND")
			}
		})
	}
}
