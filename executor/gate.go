package executor

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// gateTimer prefixes the due-timer names of gate timeouts.
const gateTimer = "gate:"

// scheduleGate wakes the loop when a waiting gate with a timeout expires.
// The deadline counts from when the gate started waiting, so a restart
// does not extend it, on the database's clock (clock.go), so a new owner
// whose clock differs from the one that stamped the start neither
// shortens nor extends it.
func (l *loop) scheduleGate(n *capstan.PlanNode, run capstan.OperationNodeRun) {
	if n.Gate == nil || n.Gate.Timeout == "" || run.StartedAt == nil {
		return
	}
	timeout, err := time.ParseDuration(n.Gate.Timeout)
	if err != nil {
		return
	}
	l.after(gateTimer+n.ID, max(0, run.StartedAt.Add(timeout).Sub(l.e.databaseNow())))
}

// retryDue reports whether a retry timer is pending (a gate's timeout
// timer does not keep the operation from waiting for its approvers).
func (l *loop) retryDue() bool {
	for name := range l.scheduled {
		if !strings.HasPrefix(name, gateTimer) {
			return true
		}
	}
	return false
}

// after sends name to the loop's due channel after d. The timer ends
// with the loop (its life), not with the executor: an operation that
// finished before a gate's 24 h timeout leaves no goroutine behind.
func (l *loop) after(name string, d time.Duration) {
	l.scheduled[name] = true
	timer := l.e.cfg.Clock.After(d)
	ctx := l.life
	l.e.wg.Add(1)
	go func() {
		defer l.e.wg.Done()
		select {
		case <-timer:
			select {
			case l.due <- name:
			case <-ctx.Done():
			}
		case <-ctx.Done():
		}
	}()
}

// timeoutGate ends a gate still waiting when its timeout expires, with
// the outcome its spec names (reject unless on_timeout says approve). The
// gate records the timeout; a rejection fails (or rolls back) the operation.
func (l *loop) timeoutGate(ctx context.Context, node string) error {
	l.dirty = true // the gate's decisions are not cached
	st, err := l.state(ctx)
	if err != nil {
		return err
	}
	run := st.runs[node]
	if run.Status != capstan.NodeWaitingApproval || st.op.Status.Terminal() {
		return nil
	}
	if n := st.node(node); n != nil && n.Gate != nil && run.StartedAt != nil {
		// A timer of an earlier opening (before a patch opened the gate
		// again, perhaps with another timeout) is not this one's.
		if d, err := time.ParseDuration(n.Gate.Timeout); err != nil || l.e.databaseNow().Before(run.StartedAt.Add(d)) {
			l.scheduleGate(n, run)
			return nil
		}
	}
	recs, err := l.e.cfg.Store.OperationRecords(ctx, l.org, l.opID, capstan.RecordGate)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(recs.Gates, func(g capstan.Gate) bool { return g.NodeID == node })
	if i < 0 || recs.Gates[i].Status != "waiting" {
		return nil
	}
	gate := recs.Gates[i]
	ch := l.change(st.op)
	outcome := "rejected"
	if gate.Spec.OnTimeout == "approve" {
		outcome = "approved"
	}
	gate.Status = capstan.GateStatus("timed_out_" + outcome)
	run.FinishedAt = l.now()
	ch.Events = append(ch.Events, l.event(event.Gate{What: "timed_out", Node: node, After: gate.Spec.Timeout, Outcome: outcome}))
	if outcome == "approved" {
		if err := run.Move(capstan.NodeSucceeded); err != nil {
			return err
		}
		if st.op.Status == capstan.OperationWaiting {
			if err := st.op.Move(capstan.OperationRunning); err != nil {
				return err
			}
		}
	} else {
		if err := run.Move(capstan.NodeFailed); err != nil {
			return err
		}
		run.Error = "gate timed out after " + gate.Spec.Timeout + " without approval"
		st.set(run)
		if err := l.fail(st, ch, node, run.Error); err != nil {
			return err
		}
	}
	ch.Gates = []capstan.Gate{gate}
	ch.NodeRuns = []capstan.OperationNodeRun{run}
	return l.commit(ctx, ch)
}
