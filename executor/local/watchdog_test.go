package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/internal/deadlinetest"
)

// TestAWatchdogKillsAJobWhoseWindowCloses: a job whose window closes
// unmoved (its executor stalled: nothing renews it) is killed by its
// watchdog, with what it left running in its process group, on the
// server's user and in the sandbox; the result says why.
func TestAWatchdogKillsAJobWhoseWindowCloses(t *testing.T) {
	for _, c := range []struct {
		name    string
		sandbox func(t *testing.T) (*Sandbox, string, string)
	}{
		{"unconfined", func(t *testing.T) (*Sandbox, string, string) { return nil, t.TempDir(), t.TempDir() }},
		{"sandboxed", func(t *testing.T) (*Sandbox, string, string) {
			h := newHostileHost(t, JobLimits{}, 0)
			return h.sb, h.work, h.outputs
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sb, dir, outputs := c.sandbox(t) // the hostile host sets an environment variable: not in parallel
			marker := fmt.Sprintf("capstan-watched-%d", time.Now().UnixNano())
			// The window closes only once the job has started (it says so
			// through a fifo): a slow sandbox start is not a stalled executor.
			ready := filepath.Join(dir, "ready")
			require.NoError(t, syscall.Mkfifo(ready, 0o600))
			require.NoError(t, os.Chmod(ready, 0o666))
			script := `(exec -a ` + marker + ` sleep 300) & echo started >> runs; echo > ready; exec -a ` + marker + `-job sleep 300`
			window := deadlinetest.In(time.Minute)
			done := make(chan job.Result, 1)
			go func() {
				done <- RunScript(context.Background(), sb, job.Job{NodeID: "watched", Spec: capstan.RunSpec{Timeout: "5m"}, Deadline: window},
					script, dir, outputs, nil)
			}()
			started, err := os.ReadFile(ready) // blocks until the job writes
			require.NoError(t, err)
			require.Equal(t, "\n", string(started))
			window.Extend(300 * time.Millisecond) // and then its executor stalls
			res := <-done
			require.Equal(t, job.ErrKindLease, res.ErrKind, "%v: %s", res.Err, res.Output)
			require.Contains(t, res.Err.Error(), "killed by its watchdog")
			require.Zero(t, processesNamed(marker), "the job and its child are gone")
			runs, err := os.ReadFile(filepath.Join(dir, "runs"))
			require.NoError(t, err)
			require.Equal(t, "started\n", string(runs))
		})
	}
}

// TestAWatchdogFollowsItsWindow: a window that keeps moving (renewals,
// ten a window, so that a loaded machine's late tick does not end it)
// keeps its job alive well past its first end; the job ends by itself.
func TestAWatchdogFollowsItsWindow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := deadlinetest.In(time.Second)
	done := make(chan job.Result, 1)
	go func() {
		done <- RunScript(context.Background(), nil, job.Job{NodeID: "renewed", Spec: capstan.RunSpec{Timeout: "1m"}, Deadline: w},
			`while [ ! -e go ]; do sleep 0.02; done; echo finished`, dir, t.TempDir(), nil)
	}()
	first := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for range tick.C { // renewed past three of its first windows
		w.Extend(time.Second)
		if time.Since(first) > 3*time.Second {
			break
		}
	}
	w.Extend(time.Minute) // and then the job may end at its own pace
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o600))
	res := <-done
	require.NoError(t, res.Err, "%s", res.Output)
	require.Contains(t, string(res.Output), "finished")
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{1500 * time.Millisecond: "1.500", 0: "0.001", -time.Second: "0.001", 15 * time.Second: "15.000"} {
		require.Equal(t, want, Seconds(d), "%v", d)
	}
}
