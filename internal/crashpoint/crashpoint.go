// Package crashpoint kills the process right after its Nth durable commit
// of an operation — the instant where a crash hurts most: the commit is
// on disk and nothing that follows it (dispatching a job, starting a
// child, answering the client, publishing the event) has happened. It
// exists for the crash sweep (make crash-sweep, cmd/capstan's
// TestCrashAtEveryCommit) and is compiled in only with the build tag
// crashpoints: the binary people run cannot be made to crash this way.
//
// CAPSTAN_CRASH_AT_COMMIT=N (N ≥ 1) kills the process with SIGKILL after
// the Nth commit; CAPSTAN_CRASH_AT_COMMIT=end after the commit that ends
// an operation that has no parent (how many commits come before it can
// differ by one between runs: results that arrive together are committed
// together); CAPSTAN_CRASH_AT_COMMIT=0 only counts. Each prints one line
// per commit to stderr ("crashpoint: commit N ..."), so a sweep learns
// how many commits an uninterrupted run makes.
//
// CAPSTAN_CRASH_SIGNAL=STOP stalls the process instead (SIGSTOP, the
// stall sweep: cmd/capstan's TestStallAtEveryCommit): it stops right
// after the commit, and once continued (SIGCONT) the committing goroutine
// goes on where it was.
package crashpoint

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"github.com/capstan-dev/capstan"
)

// Store counts the operation commits of the store it wraps.
type Store struct {
	capstan.Store
	at    int64 // the commit to crash after; 0: none
	atEnd bool  // crash after the commit that ends a top-level operation
	stall bool  // stop (SIGSTOP) instead of dying
	mu    sync.Mutex
	n     int64
}

// Wrap returns s counting its commits when the binary has crash points
// and CAPSTAN_CRASH_AT_COMMIT is set, and s itself otherwise.
func Wrap(s capstan.Store) capstan.Store {
	v, ok := os.LookupEnv("CAPSTAN_CRASH_AT_COMMIT")
	if !enabled || !ok {
		return s
	}
	stall := os.Getenv("CAPSTAN_CRASH_SIGNAL") == "STOP"
	if v == "end" {
		return &Store{Store: s, atEnd: true, stall: stall}
	}
	at, err := strconv.ParseInt(v, 10, 64)
	if err != nil || at < 0 {
		fmt.Fprintf(os.Stderr, "crashpoint: CAPSTAN_CRASH_AT_COMMIT=%q is not a count; not counting\n", v)
		return s
	}
	return &Store{Store: s, at: at, stall: stall}
}

// committed counts one commit and kills the process when it is the one.
// Commits are counted under a lock, so the Nth is one commit even when
// several goroutines commit at once.
func (s *Store) committed(what string, op *capstan.Operation, events int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	fmt.Fprintf(os.Stderr, "crashpoint: commit %d %s operation=%s status=%s events=%d\n", s.n, what, op.ID, op.Status, events)
	if s.n == s.at || s.atEnd && op.ParentID == "" && op.Status.Terminal() {
		if s.stall {
			s.at, s.atEnd = 0, false // once
			stallHere()
			return
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL is not delivered synchronously: nothing more happens here
	}
}

// stallHere stops the process and returns once it is continued: the
// signal is not delivered synchronously, so the goroutine waits for the
// SIGCONT that ends the stop, and does nothing meanwhile.
func stallHere() {
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	fmt.Fprintf(os.Stderr, "crashpoint: stopping\n")
	_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	<-cont
	fmt.Fprintf(os.Stderr, "crashpoint: continued\n")
}

// StartOperation commits, then counts.
func (s *Store) StartOperation(ctx context.Context, org string, op *capstan.Operation, plan *capstan.Plan, in *capstan.Intent, events []capstan.OperationEvent, fence *capstan.Fence) error {
	if err := s.Store.StartOperation(ctx, org, op, plan, in, events, fence); err != nil {
		return err
	}
	s.committed("start", op, len(events))
	return nil
}

// ApplyOperationChange commits, then counts.
func (s *Store) ApplyOperationChange(ctx context.Context, org string, ch *capstan.OperationChange) error {
	if err := s.Store.ApplyOperationChange(ctx, org, ch); err != nil {
		return err
	}
	s.committed("change", ch.Operation, len(ch.Events))
	return nil
}
