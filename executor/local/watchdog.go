package local

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/capstan-dev/capstan/executor/job"
)

// A job's watchdog kills its process group when the job's Deadline (its
// shard's window) passes unmoved. It is a process apart from the server —
// a fixed bash loop, no job input in it — fed the deadline's moves on a
// pipe, one line each (the seconds left). So it needs nothing of the
// server to act: a server stalled (SIGSTOP, a long pause) stops feeding
// it and its job is killed when the window closes; a server that died
// closes the pipe and its job is killed at once. Remote jobs get the same
// loop on their host (executor/remote), fed over the session's input.

// WatchdogLoop is the watchdog's shell loop: $t the seconds left; it
// reads a line per move of the deadline (the seconds left then) or done,
// and runs the kill ($kill, a command) when none comes in time or its
// input ends. It prints killed when it killed.
const WatchdogLoop = `while IFS= read -r -t "$t" line; do
  [ "$line" = done ] && exit 0
  t=$line
done
eval "$kill"
echo killed`

// watchdogScript is the local watchdog: $1 the job's process group.
const watchdogScript = `t=$2 kill='kill -KILL -- "-$1" "$1" 2>/dev/null'
` + WatchdogLoop

// Seconds writes d as the watchdog reads it: seconds with a fraction,
// never zero or less (bash's read -t 0 only polls).
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(max(d, time.Millisecond).Seconds(), 'f', 3, 64)
}

type watchdog struct {
	cmd   *exec.Cmd
	out   bytes.Buffer
	feed  *Heartbeat
	once  sync.Once
	kills bool
}

// startWatchdog watches the process group pid for d; nil (and no process)
// when d is unbounded.
func startWatchdog(pid int, d job.Deadline) (*watchdog, error) {
	if d == nil {
		return nil, nil
	}
	left, bounded := d.Remaining()
	if !bounded {
		return nil, nil
	}
	w := &watchdog{}
	w.cmd = exec.Command("bash", "-c", watchdogScript, "capstan-watchdog", strconv.Itoa(pid), Seconds(left))
	w.cmd.Env = []string{"PATH=" + prologuePath, "LC_ALL=C"}
	w.cmd.Stdout = &w.out
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := w.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := w.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the job's watchdog: %w", err)
	}
	w.feed = FeedDeadline(in, d)
	return w, nil
}

// end stops the watchdog (once) and reports whether it killed the job.
func (w *watchdog) end() bool {
	if w == nil {
		return false
	}
	w.once.Do(func() {
		w.feed.Stop()
		_ = w.cmd.Wait()
		w.kills = bytes.Contains(w.out.Bytes(), []byte("killed"))
	})
	return w.kills
}

// A Heartbeat feeds a watchdog's input: a line with the seconds left each
// time the deadline moves, and done when stopped.
type Heartbeat struct {
	stop chan struct{}
	done chan struct{}
}

// FeedDeadline feeds w with d's moves until Stop, then writes done and
// closes it.
func FeedDeadline(w io.WriteCloser, d job.Deadline) *Heartbeat {
	h := &Heartbeat{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		defer w.Close()
		for {
			select {
			case <-d.Moved():
				left, _ := d.Remaining()
				if _, err := io.WriteString(w, Seconds(left)+"\n"); err != nil {
					return // the watchdog is gone (it killed, or its host went)
				}
			case <-h.stop:
				_, _ = io.WriteString(w, "done\n")
				return
			}
		}
	}()
	return h
}

// Stop ends the feed (done is written) and waits for it.
func (h *Heartbeat) Stop() {
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
	<-h.done
}
