package remote_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/remote"
	"github.com/capstan-dev/capstan/internal/testhosts"
)

func dialer(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func targetOf(h *testhosts.Hosts, i int) *job.Target {
	x := h.Hosts[i]
	return &job.Target{Requirement: "host", Resource: "compute.node/" + x.Name, Address: x.Address, Port: x.Port, User: "root",
		HostKeys: []string{x.HostKey}, Key: h.ClientKey}
}

func sshJob(t *testing.T, target *job.Target, script, timeout string, artifacts ...string) job.Job {
	j := job.Job{OperationID: "op1", NodeID: "n", Attempt: 1, Outputs: t.TempDir(), Target: target,
		Spec: capstan.RunSpec{Runner: "ssh", Script: script, Timeout: timeout}, Env: map[string]string{"CAPSTAN_PARAM_NAME": "it's $me \"quoted\""}}
	for _, a := range artifacts {
		j.Artifacts = append(j.Artifacts, capstan.ArtifactSpec{Name: a, Type: "report", Sensitivity: "internal"})
	}
	return j
}

// TestARemoteJob runs jobs on real sshd hosts: variables arrive intact
// (never on a command line), the exit code is the job's, declared
// artifacts come back, and one connection per host serves them all.
func TestARemoteJob(t *testing.T) {
	hosts := testhosts.Start(t, 2)
	pool := remote.NewPool(remote.Config{Dial: dialer})
	defer pool.Close()
	r := remote.Runner{Pool: pool}

	j := sshJob(t, targetOf(hosts, 0), `echo "hello $CAPSTAN_PARAM_NAME"; hostname; echo art > "$CAPSTAN_OUTPUTS/report"; ps -eo args | grep -c "it's" || true`, "30s", "report", "absent")
	res := r.Run(context.Background(), j)
	require.NoError(t, res.Err, "%s", res.Output)
	require.Contains(t, string(res.Output), `hello it's $me "quoted"`)
	require.Contains(t, string(res.Output), "h1\n")
	data, err := os.ReadFile(filepath.Join(j.Outputs, "report"))
	require.NoError(t, err)
	require.Equal(t, "art\n", string(data))
	_, err = os.Stat(filepath.Join(j.Outputs, "absent"))
	require.True(t, os.IsNotExist(err), "an artifact not written is not made up")
	require.FileExists(t, filepath.Join(hosts.Hosts[0].Root, "root", ".capstan", "jobs", "op1", "outputs", "report"), "the job ran on h1")
	_, err = os.Stat(filepath.Join(hosts.Hosts[1].Root, "root", ".capstan"))
	require.True(t, os.IsNotExist(err), "and nowhere else")

	res = r.Run(context.Background(), sshJob(t, targetOf(hosts, 0), `exit 7`, "30s"))
	require.Equal(t, 7, res.ExitCode)
	require.Equal(t, "exit:7", res.ErrKind)

	for range 20 {
		res = r.Run(context.Background(), sshJob(t, targetOf(hosts, 1), `true`, "30s"))
		require.NoError(t, res.Err)
	}
	require.Equal(t, 2, pool.Open(), "one connection per host, reused")
}

// TestHostKeysArePinned: a host presenting a key other than the pinned
// one, or a target without one, is refused before anything runs.
func TestHostKeysArePinned(t *testing.T) {
	hosts := testhosts.Start(t, 2)
	pool := remote.NewPool(remote.Config{Dial: dialer})
	defer pool.Close()
	r := remote.Runner{Pool: pool}

	wrong := targetOf(hosts, 0)
	wrong.HostKeys = []string{hosts.Hosts[1].HostKey}
	res := r.Run(context.Background(), sshJob(t, wrong, `touch /root/ran`, "30s"))
	require.Equal(t, job.ErrKindHostKey, res.ErrKind, "%v", res.Err)
	require.Contains(t, res.Err.Error(), "is not the one pinned in the catalog")
	none := targetOf(hosts, 0)
	none.HostKeys = nil
	res = r.Run(context.Background(), sshJob(t, none, `touch /root/ran`, "30s"))
	require.Equal(t, job.ErrKindHostKey, res.ErrKind)
	require.Contains(t, res.Err.Error(), "pins no host_key")
	_, err := os.Stat(filepath.Join(hosts.Hosts[0].Root, "root", "ran"))
	require.True(t, os.IsNotExist(err), "nothing ran")
	require.True(t, executor.NextAttempt(capstan.RetryPolicy{MaximumAttempts: 5}, 1, res.ErrKind).Exhausted, "never retried")

	// Trusted on first use: the key is learned; a connection so dialled
	// is never lent to a target that pins nothing and trusts nothing.
	tofu := targetOf(hosts, 0)
	tofu.HostKeys, tofu.TrustOnFirstUse = nil, true
	res = r.Run(context.Background(), sshJob(t, tofu, `true`, "30s"))
	require.NoError(t, res.Err)
	require.Equal(t, hosts.Hosts[0].HostKey, tofu.Learned)
	again := targetOf(hosts, 0)
	again.HostKeys = nil
	res = r.Run(context.Background(), sshJob(t, again, `touch /root/ran`, "30s"))
	require.Equal(t, job.ErrKindHostKey, res.ErrKind, "the pooled trusting connection is not reused: %v", res.Err)
	require.Empty(t, again.Learned)
	reused := targetOf(hosts, 0)
	reused.HostKeys, reused.TrustOnFirstUse = nil, true
	require.NoError(t, r.Run(context.Background(), sshJob(t, reused, `true`, "30s")).Err)
	require.Equal(t, hosts.Hosts[0].HostKey, reused.Learned, "a reused connection says which key it trusted")

	bad := targetOf(hosts, 0)
	bad.Key = []byte("not a key")
	res = r.Run(context.Background(), sshJob(t, bad, `true`, "30s"))
	require.Equal(t, remote.KindAuth, res.ErrKind)
	require.NotContains(t, res.Err.Error(), "not a key", "the key is never repeated")
}

// TestUnreachableAndHangingHosts: an address nobody answers and a host
// that accepts the connection and then says nothing both end within the
// dial timeout, typed unreachable.
func TestUnreachableAndHangingHosts(t *testing.T) {
	hosts := testhosts.Start(t, 1)
	pool := remote.NewPool(remote.Config{Dial: dialer, DialTimeout: time.Second})
	defer pool.Close()
	r := remote.Runner{Pool: pool}

	nobody := targetOf(hosts, 0)
	nobody.Address = strings.TrimSuffix(nobody.Address, ".2") + ".77"
	began := time.Now()
	res := r.Run(context.Background(), sshJob(t, nobody, `true`, "30s"))
	require.Equal(t, remote.KindUnreachable, res.ErrKind, "%v", res.Err)
	require.Less(t, time.Since(began), 5*time.Second)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c // holds it open, says nothing
		}
	}()
	hang := targetOf(hosts, 0)
	hang.Address, hang.Port = "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
	began = time.Now()
	res = r.Run(context.Background(), sshJob(t, hang, `true`, "30s"))
	require.Equal(t, remote.KindUnreachable, res.ErrKind, "%v", res.Err)
	require.Less(t, time.Since(began), 5*time.Second)
	ln.Close()
	for c := range accepted {
		c.Close()
	}
}

// TestTimeoutKillsTheRemoteProcessGroup: a job past its timeout is
// killed on its host, the processes it started with it.
func TestTimeoutKillsTheRemoteProcessGroup(t *testing.T) {
	hosts := testhosts.Start(t, 1)
	pool := remote.NewPool(remote.Config{Dial: dialer})
	defer pool.Close()
	r := remote.Runner{Pool: pool}
	res := r.Run(context.Background(), sshJob(t, targetOf(hosts, 0), `sleep 301 & sleep 302; echo NOT-KILLED`, "1s"))
	require.Equal(t, "timeout", res.ErrKind, "%v %s", res.Err, res.Output)
	require.NotContains(t, string(res.Output), "NOT-KILLED")
	require.Eventually(t, func() bool {
		return exec.Command("pgrep", "-f", "^sleep 30[12]$").Run() != nil
	}, 5*time.Second, 50*time.Millisecond, "the job's processes are gone from the host")
}

// TestLeftoversDoNotHoldAJob: a job that leaves a background child
// holding its output ends when its script does; the child dies with it.
func TestLeftoversDoNotHoldAJob(t *testing.T) {
	hosts := testhosts.Start(t, 1)
	pool := remote.NewPool(remote.Config{Dial: dialer})
	defer pool.Close()
	began := time.Now()
	res := remote.Runner{Pool: pool}.Run(context.Background(), sshJob(t, targetOf(hosts, 0), `sleep 303 & echo left`, "1m"))
	require.NoError(t, res.Err)
	require.Less(t, time.Since(began), 10*time.Second)
	require.Eventually(t, func() bool { return exec.Command("pgrep", "-f", "^sleep 303$").Run() != nil }, 5*time.Second, 50*time.Millisecond)
}

// TestSSHDKilledMidJob: the host's sshd and the job's session die while
// it runs: the attempt ends typed connection_lost (retried by policy).
func TestSSHDKilledMidJob(t *testing.T) {
	hosts := testhosts.Start(t, 1)
	pool := remote.NewPool(remote.Config{Dial: dialer, KeepAlive: time.Second})
	defer pool.Close()
	r := remote.Runner{Pool: pool}
	done := make(chan job.Result, 1)
	go func() {
		done <- r.Run(context.Background(), sshJob(t, targetOf(hosts, 0), `touch /root/started; sleep 60`, "2m"))
	}()
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(hosts.Hosts[0].Root, "root", "started"))
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	hosts.KillSSHD(t, 0)
	select {
	case res := <-done:
		require.Equal(t, remote.KindConnectionLost, res.ErrKind, "%v", res.Err)
		require.True(t, executor.NextAttempt(capstan.RetryPolicy{MaximumAttempts: 3}, 1, res.ErrKind).Retry, "the retry policy applies")
	case <-time.After(15 * time.Second):
		t.Fatal("the attempt did not end when its host's sshd died")
	}
	hosts.StartSSHD(t, 0)
	res := r.Run(context.Background(), sshJob(t, targetOf(hosts, 0), `pkill -f "^sleep 304$"; echo back`, "30s"))
	require.NoError(t, res.Err, "a new connection once sshd is back")
}

// TestRemoteOutputIsBounded: a job printing 20 MB at once, or 1 MB a
// second, keeps MaxOutput of it.
func TestRemoteOutputIsBounded(t *testing.T) {
	hosts := testhosts.Start(t, 1)
	pool := remote.NewPool(remote.Config{Dial: dialer})
	defer pool.Close()
	r := remote.Runner{Pool: pool}
	for _, script := range []string{`head -c 20000000 /dev/zero | tr '\0' x`, `for i in 1 2 3; do head -c 1000000 /dev/zero | tr '\0' y; sleep 1; done`} {
		res := r.Run(context.Background(), sshJob(t, targetOf(hosts, 0), script, "30s"))
		require.NoError(t, res.Err)
		require.LessOrEqual(t, len(res.Output), remote.MaxOutput+100)
		require.Contains(t, string(res.Output), "more bytes of output dropped")
	}
}
