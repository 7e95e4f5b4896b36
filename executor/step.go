package executor

import (
	"context"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// step decides what the operation does next, persists it, then acts. It
// reports whether it changed anything, so the loop decides again at once.
func (l *loop) step(ctx context.Context, st *state) (bool, error) {
	op := st.op
	if op.Status == capstan.OperationPending {
		return true, l.begin(ctx, st)
	}
	switch op.Status {
	case capstan.OperationCancelling:
		return l.cancel(ctx, st)
	case capstan.OperationRollingBack:
		return l.rollback(ctx, st)
	}
	if outcome := st.outcome(); outcome != "" && len(l.inflight) == 0 && !op.Status.Terminal() {
		return true, l.complete(ctx, op, outcome)
	}
	if op.Status.Terminal() {
		return false, nil
	}
	touched := st.takeTouched() // before this step starts nodes: those wait for the next
	// A child that ended is concluded in a commit of its own, before this
	// step starts anything: that commit changes the operation, so the
	// step decides again on what it left.
	if done, err := l.followChildren(ctx, st, touched); done || err != nil {
		return true, err
	}
	ch := l.change(op) // with the results recorded since the last commit
	dispatch, children, started, err := l.startReady(st, ch)
	if err != nil {
		return false, err
	}
	verify, resumed, err := l.resumeTouched(st, ch, touched, started)
	if err != nil {
		return true, err
	}
	children = append(children, resumed...)
	for _, id := range verify {
		l.verify(ctx, st.node(id), st.runs[id].Attempts)
	}
	waiting := len(l.inflight) == 0 && len(dispatch) == 0 && !l.retryDue() && len(verify) == 0 && st.waiting()
	switch {
	case l.draining:
		// Handed over: nodes it did not start are not waiting; the
		// next owner decides the status.
	case waiting && op.Status == capstan.OperationRunning:
		if err := op.Move(capstan.OperationWaiting); err != nil {
			return false, err
		}
		ch.Events = append(ch.Events, l.event(event.OperationMoved(capstan.OperationWaiting)))
	case !waiting && op.Status == capstan.OperationWaiting && len(dispatch) > 0:
		if err := op.Move(capstan.OperationRunning); err != nil {
			return false, err
		}
		ch.Events = append(ch.Events, l.event(event.OperationMoved(capstan.OperationRunning)))
	}
	if len(ch.Events) == 0 && len(children) == 0 {
		return false, nil
	}
	// A child to start without a decision to commit is one a restart
	// interrupted before it started (resumeTouched): it is started all
	// the same, since the touched list that named it is spent.
	if len(ch.Events) > 0 {
		if err := l.commit(ctx, ch); err != nil {
			return false, err
		}
	}
	for _, id := range dispatch {
		l.dispatch(ctx, st.node(id), 1)
	}
	for _, id := range children {
		if err := l.startChild(ctx, st, st.node(id)); err != nil {
			return false, err
		}
	}
	return len(dispatch) == 0, nil
}

// startReady moves every ready node that is not out already into ch:
// jobs (to dispatch once ch is committed), gates, child operations (to
// start once committed) and manual interventions. It returns what to
// dispatch, the children to start and every node it started.
func (l *loop) startReady(st *state, ch *capstan.OperationChange) (dispatch, children []string, started map[string]bool, err error) {
	started = map[string]bool{}
	if l.draining {
		return nil, nil, started, nil // handed over: the next owner starts them
	}
	for _, id := range st.ready() {
		if l.inflight[id] {
			continue
		}
		n := st.node(id)
		// A node a patch reset keeps its attempts: the count goes on.
		run := capstan.OperationNodeRun{NodeID: id, Status: capstan.NodePending, Attempts: st.runs[id].Attempts, Revision: st.plan.Revision}
		if err := run.Move(capstan.NodeReady); err != nil {
			return nil, nil, nil, err
		}
		switch n.Type {
		case capstan.NodeJob, capstan.NodeVerification, capstan.NodeAIAnalysis:
			err = l.firstAttempt(ch, &run)
			dispatch = append(dispatch, id)
		case capstan.NodeGate:
			err = run.Move(capstan.NodeWaitingApproval)
			run.StartedAt = l.now()
			l.scheduleGate(n, run)
			g := capstan.Gate{NodeID: id, Spec: *n.Gate, Status: capstan.GateWaiting}
			if old, ok := st.decided[id]; ok { // opened again after a patch: its earlier decisions stay, dismissed
				g.Meta, g.Decisions = old.Meta, old.Decisions
			}
			ch.Gates = append(ch.Gates, g)
			ch.Events = append(ch.Events, l.event(event.Gate{What: "waiting", Node: id, Roles: n.Gate.RequiredRoles}))
		case capstan.NodeSubOperation:
			if l.e.cfg.Hooks == nil {
				err = l.needsAttention(ch, &run, n)
				break
			}
			err = l.firstAttempt(ch, &run)
			children = append(children, id)
		default: // manual_intervention
			err = l.needsAttention(ch, &run, n)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		ch.NodeRuns = append(ch.NodeRuns, run)
		st.set(run)
		started[id] = true
	}
	return dispatch, children, started, nil
}

// firstAttempt moves a ready node's run to its first running attempt.
func (l *loop) firstAttempt(ch *capstan.OperationChange, run *capstan.OperationNodeRun) error {
	if err := run.Move(capstan.NodeRunning); err != nil {
		return err
	}
	run.Attempts, run.StartedAt = run.Attempts+1, l.now()
	ch.Events = append(ch.Events, l.event(event.Node{What: "running", Node: run.NodeID, Attempt: run.Attempts, Revision: run.Revision}))
	return nil
}

// needsAttention moves a ready node's run to wait for a person, saying why.
func (l *loop) needsAttention(ch *capstan.OperationChange, run *capstan.OperationNodeRun, n *capstan.PlanNode) error {
	if err := run.Move(capstan.NodeWaitingIntervention); err != nil {
		return err
	}
	run.Error = waitingReason(n)
	ch.Events = append(ch.Events, l.event(event.Node{What: "needs_attention", Node: run.NodeID, Reason: run.Error}))
	return nil
}

// followChildren concludes the first touched sub_operation node whose
// child ended. done means it committed: the other touched nodes are
// touched again, so the next step still resumes every one of them.
func (l *loop) followChildren(ctx context.Context, st *state, touched []string) (bool, error) {
	for _, id := range touched {
		r := st.runs[id]
		if l.inflight[id] || st.node(id).Type != capstan.NodeSubOperation || r.Status != capstan.NodeRunning || r.ChildOperationID == "" {
			continue
		}
		done, err := l.followChild(ctx, st, st.node(id))
		if err != nil {
			return true, err // the loop reads the stored state again
		}
		if done {
			for _, other := range touched {
				if other != id && st.open[other] {
					st.touched[other] = true
				}
			}
			return true, nil
		}
	}
	return false, nil
}

// resumeTouched picks up the nodes whose state changed since the last step
// (or that a restart found unfinished), other than those this step
// started: timers to schedule again, rejected gates to fail, children
// interrupted before they started, and running nodes whose probes must
// decide first. A child that is still running is left to its end.
func (l *loop) resumeTouched(st *state, ch *capstan.OperationChange, touched []string, started map[string]bool) (verify, children []string, err error) {
	for _, id := range touched {
		r := st.runs[id]
		switch {
		case l.inflight[id] || started[id]:
		case st.node(id).Type == capstan.NodeSubOperation && r.Status == capstan.NodeRunning:
			if r.ChildOperationID == "" {
				children = append(children, id) // interrupted before the child started
			}
		case r.Status == capstan.NodeRetrying && !l.scheduled[id]:
			l.schedule(st.node(id), r)
		case r.Status == capstan.NodeWaitingApproval && !l.scheduled[gateTimer+id]:
			l.scheduleGate(st.node(id), r)
		case r.Status == capstan.NodeFailed && st.node(id).Type == capstan.NodeGate:
			if err := l.fail(st, ch, id, r.Error); err != nil { // rejected or timed out
				return nil, nil, err
			}
		case r.Status == capstan.NodeRunning || r.Status == capstan.NodeVerifying:
			// Interrupted by a restart, or verifying a recorded
			// intervention: the probes decide first (durability,
			// invariant 8); a job is never simply run again.
			verify = append(verify, id)
		}
	}
	return verify, children, nil
}
