package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// windowFor is a shard's window on the real clock, open for d.
func windowFor(d time.Duration) *Window {
	w := newWindow(realClock{}, true)
	w.extend(time.Now().Add(d))
	return w
}

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
			script := `(exec -a ` + marker + ` sleep 300) & echo started >> runs; exec -a ` + marker + `-job sleep 300`
			res := RunScript(context.Background(), sb, Job{NodeID: "watched", Spec: capstan.RunSpec{Timeout: "5m"}, Deadline: windowFor(300 * time.Millisecond)},
				script, dir, outputs, nil)
			require.Equal(t, ErrKindLease, res.ErrKind, "%v: %s", res.Err, res.Output)
			require.Contains(t, res.Err.Error(), "killed by its watchdog")
			require.Zero(t, processesNamed(marker), "the job and its child are gone")
			runs, err := os.ReadFile(filepath.Join(dir, "runs"))
			require.NoError(t, err)
			require.Equal(t, "started\n", string(runs))
		})
	}
}

// TestAWatchdogFollowsItsWindow: a window that keeps moving (renewals)
// keeps its job alive well past its first end; the job ends by itself.
func TestAWatchdogFollowsItsWindow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := windowFor(300 * time.Millisecond)
	done := make(chan Result, 1)
	go func() {
		done <- RunScript(context.Background(), nil, Job{NodeID: "renewed", Spec: capstan.RunSpec{Timeout: "1m"}, Deadline: w},
			`while [ ! -e go ]; do sleep 0.02; done; echo finished`, dir, t.TempDir(), nil)
	}()
	first := time.Now()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for range tick.C { // renewed for three of its windows
		w.extend(time.Now().Add(300 * time.Millisecond))
		if time.Since(first) > 900*time.Millisecond {
			break
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o600))
	res := <-done
	require.NoError(t, res.Err, "%s", res.Output)
	require.Contains(t, string(res.Output), "finished")
}

func TestWindow(t *testing.T) {
	clock := &stepClock{now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	w := newWindow(clock, true)
	require.False(t, w.Open(), "closed until a renewal grants it")
	moved := w.Moved()
	w.extend(clock.now.Add(10 * time.Second))
	require.True(t, w.Open())
	select {
	case <-moved:
	default:
		t.Fatal("an extension moves the window")
	}
	left, bounded := w.Remaining()
	require.True(t, bounded)
	require.Equal(t, 10*time.Second, left)
	moved = w.Moved()
	w.extend(clock.now.Add(5 * time.Second)) // a late renewal's: never back
	left, _ = w.Remaining()
	require.Equal(t, 10*time.Second, left)
	select {
	case <-moved:
		t.Fatal("a shorter end does not move it")
	default:
	}
	clock.now = clock.now.Add(10 * time.Second)
	require.False(t, w.Open(), "closed at its end")

	open := newWindow(clock, false) // no lease: open for good
	require.True(t, open.Open())
	_, bounded = open.Remaining()
	require.False(t, bounded)
	require.Nil(t, open.Moved())
	var none *Window
	require.True(t, none.Open())
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{1500 * time.Millisecond: "1.500", 0: "0.001", -time.Second: "0.001", 15 * time.Second: "15.000"} {
		require.Equal(t, want, Seconds(d), "%v", d)
	}
}

// stepClock is a clock tests move by hand.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time                         { return c.now }
func (c *stepClock) After(d time.Duration) <-chan time.Time { return make(chan time.Time) }
