package shard

import (
	"sync"
	"time"
)

// A Window is how long this executor may still act for the shards it
// holds: until its leases run out, as its own clock measures them from
// the start of the renewal that granted them, less a margin for a kill to
// land and for the clocks to differ in rate. No job, probe or compensation
// starts outside it (attempt.go), and every job carries it (Job.Deadline),
// so that a watchdog kills the job's processes, local or on a host, when it
// closes, whether or not the executor can still act (stalled, partitioned).
// Another executor can be granted a lease only once it has run out in the
// database's clock, which is later: the two never act at once.
//
// Without a Lease (the embedded store: one process) the window is open for
// good.
type Window struct {
	clock   Clock
	bounded bool

	mu    sync.Mutex
	until time.Time     // the window closes then (bounded only)
	moved chan struct{} // closed, and replaced, when until moves
}

// NewWindow returns a window closed until the first extension, or open
// for good when it is not bounded.
func NewWindow(clock Clock, bounded bool) *Window {
	return &Window{clock: clock, bounded: bounded, moved: make(chan struct{})}
}

// WindowMargin is how much sooner than the leases the window closes: a
// tenth of a term (1.5 s of the default 15 s).
func WindowMargin(term time.Duration) time.Duration { return term / 10 }

// Open reports whether work may start now.
func (w *Window) Open() bool {
	left, bounded := w.Remaining()
	return !bounded || left > 0
}

// Remaining is how long the window stays open from now; bounded is false
// for a window open for good.
func (w *Window) Remaining() (left time.Duration, bounded bool) {
	if w == nil || !w.bounded {
		return 0, false
	}
	w.mu.Lock()
	until := w.until
	w.mu.Unlock()
	return until.Sub(w.clock.Now()), true
}

// Moved is closed when the window moves (a renewal extended it): a
// watchdog then learns the new deadline, and work refused while it was
// closed may start again.
func (w *Window) Moved() <-chan struct{} {
	if w == nil || !w.bounded {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.moved
}

// Extend moves the window's end to until, never back: a renewal that
// ended late must not shorten what an earlier one granted.
func (w *Window) Extend(until time.Time) {
	if !w.bounded {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !until.After(w.until) {
		return
	}
	w.until = until
	close(w.moved)
	w.moved = make(chan struct{})
}

// Clock is the time a window is measured by (the executor's).
type Clock interface {
	Now() time.Time
}
