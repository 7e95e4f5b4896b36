package remote_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/remote"
	"github.com/capstan-dev/capstan/internal/deadlinetest"
	"github.com/capstan-dev/capstan/internal/testhosts"
)

// TestAHostKillsAJobWhoseWindowCloses: on a real sshd host, a job whose
// window closes unmoved (its executor stalled) is killed there by its
// watchdog, with what it started in its process group; one whose window
// keeps moving runs to its end. The host's own records say so.
func TestAHostKillsAJobWhoseWindowCloses(t *testing.T) {
	hosts := testhosts.Start(t, 1)
	pool := remote.NewPool(remote.Config{Dial: dialer})
	defer pool.Close()
	r := remote.Runner{Pool: pool}
	marker := fmt.Sprintf("capstan-remote-watched-%d", time.Now().UnixNano())
	runs := filepath.Join(hosts.Hosts[0].Root, "root", "runs")

	j := sshJob(t, targetOf(hosts, 0), `echo started >> /root/runs; (exec -a `+marker+` sleep 300) & sleep 300; echo ended >> /root/runs`, "5m")
	j.Deadline = deadlinetest.In(500 * time.Millisecond)
	res := r.Run(context.Background(), j)
	require.Equal(t, job.ErrKindLease, res.ErrKind, "%v: %s", res.Err, res.Output)
	require.Contains(t, res.Err.Error(), "killed on compute.node/h1 by its watchdog")
	data, err := os.ReadFile(runs)
	require.NoError(t, err)
	require.Equal(t, "started\n", string(data))
	left := r.Run(context.Background(), sshJob(t, targetOf(hosts, 0), `pgrep -fc '[`+marker[:1]+`]`+marker[1:]+`' || true`, "30s"))
	require.NoError(t, left.Err)
	require.Equal(t, "0\n", string(left.Output), "nothing of the job is left on the host")

	// Renewed: the deadline moves over the session's input and the job
	// lives past its first end.
	d := deadlinetest.In(500 * time.Millisecond)
	j = sshJob(t, targetOf(hosts, 0), `while [ ! -e /root/go ]; do sleep 0.02; done; echo renewed >> /root/runs`, "1m")
	j.Deadline = d
	done := make(chan job.Result, 1)
	go func() { done <- r.Run(context.Background(), j) }()
	first := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		d.Extend(500 * time.Millisecond)
		if time.Since(first) > 1500*time.Millisecond {
			break
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(hosts.Hosts[0].Root, "root", "go"), nil, 0o644))
	res = <-done
	require.NoError(t, res.Err, "%s", res.Output)
	data, err = os.ReadFile(runs)
	require.NoError(t, err)
	require.Equal(t, "started\nrenewed\n", string(data))
}
