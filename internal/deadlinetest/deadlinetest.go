// Package deadlinetest is a job's deadline for the runners' tests: the
// executor's window (a job.Deadline) on the real clock, moved by hand.
package deadlinetest

import (
	"sync"
	"time"
)

// Deadline ends at a time the test moves.
type Deadline struct {
	mu    sync.Mutex
	until time.Time
	moved chan struct{}
}

// In is a deadline d from now.
func In(d time.Duration) *Deadline {
	return &Deadline{until: time.Now().Add(d), moved: make(chan struct{})}
}

// Remaining implements job.Deadline: always bounded.
func (d *Deadline) Remaining() (time.Duration, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return time.Until(d.until), true
}

// Moved implements job.Deadline.
func (d *Deadline) Moved() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.moved
}

// Extend moves the end to by from now (a renewal).
func (d *Deadline) Extend(by time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.until = time.Now().Add(by)
	close(d.moved)
	d.moved = make(chan struct{})
}
