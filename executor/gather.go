package executor

import (
	"context"
	"time"
)

// Group commit. Each commit of an operation costs at least one fsync (a
// few hundred microseconds on bbolt, milliseconds on Neo4j), while a
// worker may report a short job in microseconds. So when a result arrives
// and more work of the operation is out (or queued, already committed as
// running), the loop keeps handing out that work and taking results for
// a moment before it commits them all at once. Nothing is acted on before
// it is committed: the results wait in memory, and a crash meanwhile only
// means those nodes are recovered by their probes, as any running node is.
const (
	// gatherIdle is how long the loop waits for the next result before it
	// commits what it has: about one commit's cost.
	gatherIdle = 500 * time.Microsecond
	// gatherMax bounds how long results wait for their commit.
	gatherMax = 5 * time.Millisecond
	// gatherBatch bounds how many results one commit takes.
	gatherBatch = 256
)

// gather takes the result r and those that follow it closely, handing out
// queued work meanwhile; it stops at once when no other work is out (a
// chain never waits), on an outside change, or when a bound is reached.
func (l *loop) gather(ctx context.Context, r nodeResult) []nodeResult {
	rs := []nodeResult{r}
	l.took(r)
	var idle *time.Timer // only when there is something to wait for
	deadline := time.Now().Add(l.gatherMax)
	for len(rs) < gatherBatch && (l.busy > 0 || l.canHand()) && time.Now().Before(deadline) {
		var send chan func()
		var head func()
		if l.canHand() && ctx.Err() == nil { // a select picks at random: an ended loop hands out nothing
			send, head = l.e.tasks, l.queue[0].task
		}
		if idle == nil {
			idle = time.NewTimer(l.gatherIdle)
			defer idle.Stop()
		} else {
			idle.Reset(l.gatherIdle)
		}
		select {
		case r := <-l.results:
			rs = append(rs, r)
			l.took(r)
		case send <- head:
			l.handed()
		case <-idle.C:
			return rs
		case <-l.wake:
			if l.woken() {
				l.dirty = true // an outside change: decide on it now
				return rs
			}
		case <-ctx.Done():
			return rs
		}
	}
	return rs
}

// canHand reports whether queued work may go to a worker now.
func (l *loop) canHand() bool {
	return len(l.queue) > 0 && l.busy < l.e.cfg.PerOperation
}

// handed notes that the head of the queue went to a worker.
func (l *loop) handed() {
	l.queue = l.queue[1:]
	l.busy++
}

// took notes a worker's report.
func (l *loop) took(r nodeResult) {
	l.busy--
	if r.refused { // still out: it starts again once the window moves
		l.e.cfg.Log.Info("the shard's window has closed: the work waits for a renewal", "operation", l.opID, "node", r.node, "attempt", r.attempt)
		l.held = append(l.held, r.again)
		return
	}
	delete(l.inflight, r.node)
}
