package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// finish records attempts' results (several when workers reported at
// once) into the change the next step commits with its own decisions: one
// commit both ends these nodes and starts what they made ready.
func (l *loop) finish(ctx context.Context, rs []nodeResult) error {
	if ctx.Err() != nil {
		return nil // shutting down: the nodes stay as persisted and are recovered on start
	}
	st, err := l.state(ctx)
	if err != nil {
		return err
	}
	ch := l.change(st.op)
	for _, r := range rs {
		if err := l.record(st, ch, r); err != nil {
			return err
		}
	}
	if len(ch.Events) > 0 {
		l.pending = ch
	}
	return nil
}

// record adds one attempt's result to ch: evidence, diagnostics, the
// node's verdict (succeeded only with passed evidence, invariant 5) and
// what the retry policy says next.
func (l *loop) record(st *state, ch *capstan.OperationChange, r nodeResult) error {
	if r.refused {
		return nil // not over: held until the window moves (took)
	}
	for _, t := range r.trusted { // whatever became of the attempt: the key was trusted
		ch.Events = append(ch.Events, l.event(t.event))
		if t.node != nil {
			ch.Resources = append(withoutKey(ch.Resources, t.node.Key()), t.node)
		}
	}
	if r.kind == kindCompensate {
		return l.compensated(st, ch, r)
	}
	n := st.node(r.node)
	run := st.runs[r.node]
	if st.op.Status == capstan.OperationCancelling || st.op.Status.Terminal() ||
		(run.Status != capstan.NodeRunning && run.Status != capstan.NodeVerifying) {
		return nil // decided elsewhere meanwhile (cancelled)
	}
	ch.Evidence = append(ch.Evidence, r.evidence...)
	ch.Artifacts = append(ch.Artifacts, r.artifacts...)
	for _, e := range r.evidence {
		ch.Events = append(ch.Events, l.event(event.Evidence{Node: r.node, Item: e.Item, Result: e.Result}))
	}
	verdict, errKind := Verdict(r.res, r.evidence)
	run.FinishedAt = l.now()
	var err error
	if verdict == "" {
		err = l.succeeded(ch, &run, n, r)
		l.proposeFrom(n, r.evidence)
	} else {
		err = l.failedAttempt(st, ch, &run, n, r, verdict, errKind)
	}
	if err != nil {
		return err
	}
	ch.NodeRuns = append(ch.NodeRuns, run)
	st.set(run)
	return nil
}

// succeeded marks a node whose evidence all passed as succeeded.
func (l *loop) succeeded(ch *capstan.OperationChange, run *capstan.OperationNodeRun, n *capstan.PlanNode, r nodeResult) error {
	if run.Status == capstan.NodeRunning {
		if err := run.Move(capstan.NodeVerifying); err != nil {
			return err
		}
	}
	if err := run.Move(capstan.NodeSucceeded); err != nil {
		return err
	}
	run.Error = ""
	typ := "succeeded"
	if r.kind == kindProbes && n.Type == capstan.NodeJob && n.Intervention == nil {
		typ = "recovered" // the evidence proved the job had done its work
	}
	ch.Events = append(ch.Events, l.event(event.Node{What: typ, Node: r.node, Attempt: r.attempt}))
	return nil
}

// failedAttempt marks a node failed for verdict and decides what follows:
// people, when only probes ran and the node may not simply run again; a
// retry, a wait for attention or the operation's failure, as its policy
// says.
func (l *loop) failedAttempt(st *state, ch *capstan.OperationChange, run *capstan.OperationNodeRun, n *capstan.PlanNode, r nodeResult, verdict, errKind string) error {
	if r.res.Err == nil && run.Status == capstan.NodeRunning {
		if err := run.Move(capstan.NodeVerifying); err != nil {
			return err
		}
	}
	if err := run.Move(capstan.NodeFailed); err != nil {
		return err
	}
	run.Error = verdict
	ch.Events = append(ch.Events, l.event(event.Node{What: "failed", Node: r.node, Attempt: r.attempt, Reason: verdict}))
	if r.kind == kindProbes && (n.Type != capstan.NodeJob || !n.Job.Controls.Idempotent) {
		return l.unproven(st, ch, run, n, r.node)
	}
	if r.kind == kindProbes && !intervenedSince(st, *run) {
		// A restart interrupted this idempotent job before its evidence
		// proved it done (perhaps before it ran at all): it simply runs
		// again, outside its retry budget — the attempt never ended.
		if err := run.Move(capstan.NodeRetrying); err != nil {
			return err
		}
		ch.Events = append(ch.Events, l.event(event.Node{What: "retrying", Node: r.node, Wait: "0s",
			Reason: "interrupted before its evidence proved it done; it is idempotent, so it runs again"}))
		return nil
	}
	d := NextAttempt(nodePolicy(n), run.Attempts, errKind)
	switch {
	case d.Retry:
		if err := run.Move(capstan.NodeRetrying); err != nil {
			return err
		}
		ch.Events = append(ch.Events, l.event(event.Node{What: "retrying", Node: r.node, Wait: d.Wait.String()}))
	case d.OnExhausted == "wait":
		if err := l.waitForPeople(st); err != nil {
			return err
		}
		if wantsAssist(n) {
			l.assist = append(l.assist, assistance{node: r.node})
		}
		ch.Events = append(ch.Events, l.event(event.Operation{What: "needs_attention", Node: r.node, Reason: verdict + "; " + d.Reason}))
	default:
		st.set(*run)
		return l.fail(st, ch, r.node, verdict)
	}
	return nil
}

// unprovenReason says why a node whose probes did not prove it done waits
// for people: the intervention recorded for this attempt did not verify,
// or a restart interrupted it.
func unprovenReason(st *state, run capstan.OperationNodeRun, n *capstan.PlanNode, verdict string) string {
	if iv, ok := st.intervened[run.NodeID]; ok && intervenedSince(st, run) {
		return fmt.Sprintf("needs attention: the intervention %s recorded at %s did not verify (%s); fix the node and record another, or retry it",
			iv.Actor, iv.At.UTC().Format(time.RFC3339), verdict)
	}
	if n.Type == capstan.NodeJob {
		return "needs attention: interrupted and its evidence does not prove it done; the job is not idempotent, so it is not re-run without an approval (" + verdict + ")"
	}
	return "needs attention: " + verdict
}

// intervenedSince reports whether a person recorded an intervention on
// the node during its current attempt: its probes then verify that, not
// a restart's interruption.
func intervenedSince(st *state, run capstan.OperationNodeRun) bool {
	iv, ok := st.intervened[run.NodeID]
	return ok && (run.StartedAt == nil || !iv.At.Before(*run.StartedAt))
}

// waitForPeople moves a running operation to waiting (one waiting
// already stays).
func (l *loop) waitForPeople(st *state) error {
	if st.op.Status == capstan.OperationRunning {
		return st.op.Move(capstan.OperationWaiting)
	}
	return nil
}

// unproven hands a node whose probes did not prove it done to people:
// without proof, a non-idempotent job is not run again, and an
// intervention that did not verify goes back to whoever made it.
func (l *loop) unproven(st *state, ch *capstan.OperationChange, run *capstan.OperationNodeRun, n *capstan.PlanNode, node string) error {
	verdict := run.Error
	if err := run.Move(capstan.NodeWaitingIntervention); err != nil {
		return err
	}
	run.Error = unprovenReason(st, *run, n, verdict)
	if err := l.waitForPeople(st); err != nil {
		return err
	}
	ch.Events = append(ch.Events, l.event(event.Node{What: "needs_attention", Node: node, Reason: run.Error}))
	return nil
}

// schedule wakes the loop when a retrying node is due.
func (l *loop) schedule(n *capstan.PlanNode, run capstan.OperationNodeRun) {
	l.after(n.ID, NextAttempt(nodePolicy(n), run.Attempts, "").Wait)
}

// retry starts the next attempt of a retrying node.
func (l *loop) retry(ctx context.Context, node string) error {
	st, err := l.state(ctx)
	if err != nil {
		return err
	}
	run := st.runs[node]
	if run.Status != capstan.NodeRetrying || (st.op.Status != capstan.OperationRunning && st.op.Status != capstan.OperationWaiting) {
		return nil
	}
	if err := run.Move(capstan.NodeRunning); err != nil {
		return err
	}
	run.Attempts++
	run.StartedAt, run.FinishedAt = l.now(), nil
	ch := &capstan.OperationChange{Operation: st.op, NodeRuns: []capstan.OperationNodeRun{run},
		Events: []capstan.OperationEvent{l.event(event.Node{What: "running", Node: node, Attempt: run.Attempts})}}
	if err := l.commit(ctx, ch); err != nil {
		return err
	}
	l.dispatch(ctx, st.node(node), run.Attempts)
	return nil
}

// analysisPolicy retries an analyzer (a remote model may be briefly
// unavailable), then asks people: an analysis never fails an operation.
var analysisPolicy = capstan.RetryPolicy{MaximumAttempts: 3, InitialInterval: "500ms", OnExhausted: "wait"}

// nodePolicy is the retry policy of a node: its job contract's, or the
// analysis policy for an ai_analysis node.
func nodePolicy(n *capstan.PlanNode) capstan.RetryPolicy {
	switch {
	case n.Job != nil:
		return n.Job.Controls.Retry
	case n.Type == capstan.NodeAIAnalysis:
		return analysisPolicy
	}
	return capstan.RetryPolicy{}
}
