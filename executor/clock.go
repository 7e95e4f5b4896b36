package executor

import "time"

// The times an executor stamps on what it writes (a node's start, a
// gate's wait, an operation's end) are the database's clock's, as nearly
// as it can tell: every renewal reads the database's clock with the
// leases (Lease.ExecutorLeases) and keeps how far it is ahead of the
// executor's own. A gate's timeout, counted from a start another replica
// stamped, then runs out when it should on whichever replica owns the
// operation now, whatever their clocks say (their difference is gone,
// the round trip's half is left). Without a Lease (the embedded store,
// one process) the executor's clock is the database's.

// learnDatabaseClock keeps the database's clock's lead, read as db
// between asked and answered on this executor's clock.
func (e *Executor) learnDatabaseClock(asked, answered, db time.Time) {
	if db.IsZero() {
		return
	}
	mid := asked.Add(answered.Sub(asked) / 2)
	e.dbOffset.Store(int64(db.Sub(mid)))
}

// databaseNow is the database's clock now, as this executor knows it.
func (e *Executor) databaseNow() time.Time {
	return e.cfg.Clock.Now().Add(time.Duration(e.dbOffset.Load()))
}
