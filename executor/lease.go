package executor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/filelock"
)

// Lease is a database's executor lease (cypher.Store has one). Every
// executor resumes every unfinished operation of its database, so two
// processes on one database would both run them — a non-idempotent job
// twice. With a Lease, an executor runs operations only while it holds
// the lease. (The embedded store needs none: its data directory is locked
// to one process.)
type Lease interface {
	AcquireExecutorLease(ctx context.Context, holder string, ttl time.Duration) (bool, capstan.LeaseHolder, error)
	ReleaseExecutorLease(ctx context.Context, holder string) error
}

// DefaultLeaseTerm is how long a lease lasts unless renewed; it is renewed
// every third of that.
const DefaultLeaseTerm = 15 * time.Second

// defaultHolder names this executor to the others: its host and its
// directory, the same after a restart, so a restarted server takes its
// own lease back at once instead of waiting for it to expire. Two live
// processes cannot share the name: the directory is locked to one
// (lockDir).
func defaultHolder(dir string) string {
	host, _ := os.Hostname()
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return host + ":" + dir
}

// lockDir locks the executor's directory to this process, so no other
// process on this host holds the lease under the same name; the lock ends
// with the returned file (closed by Stop, or by the process's exit).
func lockDir(dir string) (*os.File, error) {
	f, err := filelock.TryLock(filepath.Join(dir, "executor.lock"))
	if errors.Is(err, filelock.ErrLocked) {
		return nil, capstan.Errorf(capstan.ECONFLICT, "executor directory %s is used by another process", dir)
	}
	if err != nil {
		return nil, capstan.Wrap("executor.Start", err)
	}
	return f, nil
}

// acquireLease waits for the lease. A holder that died lets it expire
// within a term; one that still renews it after two terms is alive, and
// this executor must not run: that is an error.
func (e *Executor) acquireLease(ctx context.Context) error {
	c := e.cfg
	deadline := c.Clock.Now().Add(2 * c.LeaseTerm)
	said := false
	for {
		start := c.Clock.Now()
		held, other, err := c.Lease.AcquireExecutorLease(ctx, c.LeaseHolder, c.LeaseTerm)
		if err != nil {
			return err
		}
		if held {
			e.leaseUntil = start.Add(c.LeaseTerm)
			e.setFence(other.Token)
			return nil
		}
		if !said {
			c.Log.Warn("another executor holds this database's lease; waiting for it to end", "holder", other.ID, "until", other.Until)
			said = true
		}
		if c.Clock.Now().After(deadline) {
			return capstan.Errorf(capstan.ECONFLICT, "another Capstan process (%s) runs this database's operations and keeps its lease; one database has one executor at a time", other.ID)
		}
		select {
		case <-ctx.Done():
			return capstan.Errorf(capstan.EUNAVAILABLE, "waiting for the executor lease: %v", ctx.Err())
		case <-c.Clock.After(c.LeaseTerm / 3):
		}
	}
}

// keepLease renews the lease every third of a term until the executor
// stops, and launches any unfinished operation it does not run yet (one
// started through another server, which stores it but has no lease to
// run it). While the database cannot be reached the executor runs on (its
// steps cannot commit anyway), trying again every fifteenth of a term,
// until the lease would run out before the next attempt ends; then it
// stops running operations — another executor may take the lease once it
// has run out — and keeps trying: taking the lease back starts a new
// tenure that resumes every unfinished operation from what was persisted.
// When another
// executor holds the lease, this one stops for good and reports it on Lost.
func (e *Executor) keepLease() {
	c := e.cfg
	wait := c.LeaseTerm / 3
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-c.Clock.After(wait):
		}
		wait = c.LeaseTerm / 3
		start := c.Clock.Now()
		held, other, err := e.renewLease()
		switch {
		case e.ctx.Err() != nil:
			return
		case err != nil:
			// Try again soon, and stop running operations before the
			// lease runs out, not at the first attempt after it: another
			// executor may take it the moment it does.
			wait = c.LeaseTerm / 15
			if !e.inTenure() {
				break
			}
			if !outlasts(c.Clock.Now(), e.leaseUntil, c.LeaseTerm) {
				c.Log.Warn("renewing the executor lease failed; trying again", "err", err.Error(), "until", e.leaseUntil)
				break
			}
			c.Log.Error("the executor lease runs out before it can be renewed; stopping operations until it is", "err", err.Error())
			e.endTenure()
		case held && e.inTenure() && e.setFence(other.Token):
			// Granted anew meanwhile (it ran out, another held it): the
			// writes under the old grant are refused; resume from what
			// is persisted under the new one.
			e.leaseUntil = start.Add(c.LeaseTerm)
			c.Log.Warn("the executor lease was granted anew; resuming operations under the new grant", "token", other.Token)
			e.endTenure()
			if err := e.beginTenure(); err != nil {
				c.Log.Warn("resuming operations failed; trying again", "err", err.Error())
				e.endTenure()
			}
		case held && e.inTenure():
			e.leaseUntil = start.Add(c.LeaseTerm)
			if err := e.launchUnfinished(e.ctx); err != nil && e.ctx.Err() == nil {
				c.Log.Warn("listing unfinished operations failed", "err", err.Error())
			}
		case held:
			e.leaseUntil = start.Add(c.LeaseTerm)
			e.setFence(other.Token)
			c.Log.Info("executor lease taken back; resuming operations")
			if err := e.beginTenure(); err != nil {
				c.Log.Warn("resuming operations failed; trying again", "err", err.Error())
				e.endTenure()
			}
		default:
			err := capstan.Errorf(capstan.EUNAVAILABLE, "another executor (%s) took this database's lease", other.ID)
			c.Log.Error("executor lease lost; no longer running operations", "err", err.Error())
			e.lose(err)
			return
		}
	}
}

// renewTimeout bounds one call for the lease: a call that hangs on an
// unreachable database must not outlast the lease.
func renewTimeout(term time.Duration) time.Duration { return term / 5 }

// outlasts reports whether the next attempt to renew a lease of term that
// runs out at until — after a failed one, at now — could end after it:
// then the executor must stop running operations now.
func outlasts(now, until time.Time, term time.Duration) bool {
	return !now.Add(term/15 + renewTimeout(term)).Before(until)
}

// renewLease asks for the lease once, for at most renewTimeout.
func (e *Executor) renewLease() (bool, capstan.LeaseHolder, error) {
	ctx, cancel := context.WithTimeout(e.ctx, renewTimeout(e.cfg.LeaseTerm))
	defer cancel()
	return e.cfg.Lease.AcquireExecutorLease(ctx, e.cfg.LeaseHolder, e.cfg.LeaseTerm)
}

// Lost reports, once, that the executor lost its lease and stopped
// running operations (a server should exit: it can no longer run them
// safely). Without a Lease it never does.
func (e *Executor) Lost() <-chan error { return e.lost }

// releaseLease gives the lease back, so the next executor need not wait.
func (e *Executor) releaseLease() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.cfg.Lease.ReleaseExecutorLease(ctx, e.cfg.LeaseHolder); err != nil {
		e.cfg.Log.Warn("releasing the executor lease failed; it expires by itself", "err", err.Error())
	}
}

// setFence records the lease's grant this executor holds (its fencing
// token) and reports whether it changed.
func (e *Executor) setFence(token int64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := capstan.Fence{Holder: e.cfg.LeaseHolder, Token: token}
	changed := e.fence != f
	e.fence = f
	return changed
}

// lose stops running operations for good and reports err on Lost, once.
func (e *Executor) lose(err error) {
	e.loseOnce.Do(func() {
		e.endTenure()
		e.lost <- err
		e.cancel()
	})
}

// fenced is what a loop does when the store refused its write because
// another executor holds the lease now: the executor stops (a server
// exits), from a goroutine of its own (stopping waits for the loop).
func (e *Executor) fenced(err error) {
	e.cfg.Log.Error("a write was refused: another executor holds this database's lease; no longer running operations", "err", err.Error())
	go e.lose(err)
}
