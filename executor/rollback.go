package executor

import (
	"context"
	"sort"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// fail ends the operation after a node failed for good: it rolls back
// when some completed job has compensation to run, otherwise it fails.
func (l *loop) fail(st *state, ch *capstan.OperationChange, node, reason string) error {
	op := st.op
	if op.Status != capstan.OperationRunning && op.Status != capstan.OperationWaiting {
		return nil // already ending
	}
	if len(Compensations(st.plan, st.runs)) > 0 {
		if err := op.Move(capstan.OperationRollingBack); err != nil {
			return err
		}
		ch.Events = append(ch.Events, l.event(event.Operation{What: "rolling_back", Node: node, Reason: reason}))
		return nil
	}
	// Nothing else of a failed operation may stay unfinished: its other
	// nodes end cancelled in the commit that fails it, and once that
	// commit is durable the loop stops the jobs still out (loop.go).
	if err := l.endRuns(st, ch); err != nil {
		return err
	}
	if err := op.Move(capstan.OperationFailed); err != nil {
		return err
	}
	op.CompletedAt = l.now()
	ch.Events = append(ch.Events, l.event(event.Operation{What: "failed", Node: node, Reason: reason}))
	return nil
}

// Compensations lists the succeeded jobs whose rollback policy compensates,
// in reverse order of completion: the order a rollback runs them.
func Compensations(p *capstan.Plan, runs map[string]capstan.OperationNodeRun) []string {
	var ids []string
	for id, r := range runs {
		n := p.Node(id)
		if r.Status == capstan.NodeSucceeded && n != nil && n.Job != nil &&
			n.Job.Controls.Rollback.Strategy == "compensate" && n.Job.Controls.Rollback.Compensation != nil {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := runs[ids[i]].FinishedAt, runs[ids[j]].FinishedAt
		if a != nil && b != nil && !a.Equal(*b) {
			return a.After(*b)
		}
		return ids[i] > ids[j]
	})
	return ids
}

// rollback runs the next compensation, one at a time, each verified by its
// own evidence; when none is left the operation is rolled back. Jobs still
// running when the operation failed finish first (and are compensated too
// if they succeeded). A restart runs an interrupted compensation again, so
// compensations must be safe to repeat.
func (l *loop) rollback(ctx context.Context, st *state) (bool, error) {
	if len(l.inflight) > 0 {
		return false, nil
	}
	ch := l.change(st.op)
	next := Compensations(st.plan, st.runs)
	if len(next) == 0 {
		if err := l.endRuns(st, ch); err != nil {
			return false, err
		}
		if err := st.op.Move(capstan.OperationRolledBack); err != nil {
			return false, err
		}
		st.op.CompletedAt = l.now()
		ch.Events = append(ch.Events, l.event(event.OperationMoved(capstan.OperationRolledBack)))
		return true, l.commit(ctx, ch)
	}
	ch.Events = append(ch.Events, l.event(event.CompensationRunning{Node: next[0]}))
	if err := l.commit(ctx, ch); err != nil {
		return false, err
	}
	l.start(ctx, st.node(next[0]), st.runs[next[0]].Attempts, kindCompensate)
	return false, nil
}

// compensated records a compensation's result: the node is rolled back
// when its rollback evidence passed; otherwise the operation fails.
func (l *loop) compensated(st *state, ch *capstan.OperationChange, r nodeResult) error {
	run := st.runs[r.node]
	if st.op.Status != capstan.OperationRollingBack || run.Status != capstan.NodeSucceeded {
		return nil
	}
	ch.Evidence = append(ch.Evidence, r.evidence...)
	ch.Artifacts = append(ch.Artifacts, r.artifacts...)
	verdict, _ := Verdict(r.res, r.evidence)
	if verdict == "" {
		if err := run.Move(capstan.NodeRolledBack); err != nil {
			return err
		}
		ch.NodeRuns = append(ch.NodeRuns, run)
		st.set(run)
		ch.Events = append(ch.Events, l.event(event.Node{What: "rolled_back", Node: r.node}))
		return nil
	}
	if err := l.endRuns(st, ch); err != nil {
		return err
	}
	if err := st.op.Move(capstan.OperationFailed); err != nil {
		return err
	}
	st.op.CompletedAt = l.now()
	ch.Events = append(ch.Events, l.event(event.Operation{What: "failed", Node: r.node, Reason: "compensation failed: " + verdict}))
	return nil
}

// endRuns cancels every node run that can no longer finish; a failed node
// stays failed, so the record says why the operation ended.
func (l *loop) endRuns(st *state, ch *capstan.OperationChange) error {
	ids := make([]string, 0, len(st.runs))
	for id := range st.runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := st.runs[id]
		switch r.Status {
		case capstan.NodeWaitingApproval, capstan.NodeWaitingIntervention, capstan.NodeRetrying,
			capstan.NodeRunning, capstan.NodeVerifying, capstan.NodePending, capstan.NodeReady:
			if err := r.Move(capstan.NodeCancelled); err != nil {
				return err
			}
			r.FinishedAt = l.now()
			ch.NodeRuns = append(ch.NodeRuns, r)
			st.set(r)
			ch.Events = append(ch.Events, l.event(event.Node{What: "cancelled", Node: r.NodeID}))
		}
	}
	return nil
}
