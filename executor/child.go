package executor

import (
	"context"

	"github.com/capstan-dev/capstan"
)

// startChild persists the sub_operation node as running, then starts the
// child operation and records its id. A restart between the two finds the
// child again through its idempotency key.
func (l *loop) startChild(ctx context.Context, st *state, n *capstan.PlanNode) error {
	if l.e.cfg.Hooks == nil {
		return nil
	}
	id, err := l.e.cfg.Hooks.StartChild(ctx, l.org, st.op, n)
	run := st.runs[n.ID]
	ch := l.change(st.op)
	if err != nil {
		_ = run.Move(capstan.NodeFailed)
		run.Error = "sub-operation could not start: " + capstan.ErrorMessage(err)
		run.FinishedAt = l.now()
		ch.Events = append(ch.Events, l.event("node.failed", map[string]any{"node": n.ID, "reason": run.Error}))
		st.set(run)
		l.fail(st, ch, n.ID, run.Error)
	} else {
		run.ChildOperationID = id
		ch.Events = append(ch.Events, l.event("suboperation.started", map[string]any{"node": n.ID, "child": id}))
	}
	ch.NodeRuns = []capstan.OperationNodeRun{run}
	return l.commit(ctx, ch)
}

// followChild concludes a sub_operation node once its child ended: the
// created resource becomes the binding's provider, or the child's failure
// fails the node.
func (l *loop) followChild(ctx context.Context, st *state, n *capstan.PlanNode) (bool, error) {
	run := st.runs[n.ID]
	child, err := l.e.cfg.Store.GetOperation(ctx, l.org, run.ChildOperationID)
	if err != nil {
		return false, err
	}
	if !child.Status.Terminal() {
		return false, nil
	}
	ch := l.change(st.op)
	run.FinishedAt = l.now()
	if child.Status == capstan.OperationSucceeded {
		key, err := l.e.cfg.Hooks.ChildSucceeded(ctx, l.org, st.op, n, child)
		if err != nil {
			return false, err
		}
		_ = run.Move(capstan.NodeVerifying)
		_ = run.Move(capstan.NodeSucceeded)
		ch.Evidence = append(ch.Evidence, capstan.Evidence{ProducedBy: n.ID, Capability: n.SubOperation.ExpectedCapability, Item: "provider-created",
			Result: capstan.EvidencePassed, ObservedAt: *l.now(), Source: map[string]any{"type": "sub_operation", "operation": child.ID, "resource": key}})
		ch.Events = append(ch.Events, l.event("binding.resolved", map[string]any{"node": n.ID, "binding": n.SubOperation.Requirement, "provider": key}),
			l.event("node.succeeded", map[string]any{"node": n.ID, "child": child.ID}))
	} else {
		_ = run.Move(capstan.NodeFailed)
		run.Error = "sub-operation " + child.ID + " ended " + string(child.Status)
		ch.Events = append(ch.Events, l.event("node.failed", map[string]any{"node": n.ID, "reason": run.Error}))
		st.set(run)
		l.fail(st, ch, n.ID, run.Error)
	}
	ch.NodeRuns = []capstan.OperationNodeRun{run}
	return true, l.commit(ctx, ch)
}

// cancelChildren asks the running children of a cancelled operation to stop.
func (l *loop) cancelChildren(ctx context.Context, st *state) {
	if l.e.cfg.Hooks == nil {
		return
	}
	for _, r := range st.runs {
		if r.ChildOperationID != "" && r.Status == capstan.NodeRunning {
			if err := l.e.cfg.Hooks.CancelChild(ctx, l.org, r.ChildOperationID); err != nil {
				l.e.cfg.Log.Warn("cancelling a child operation failed", "operation", l.opID, "child", r.ChildOperationID, "err", err.Error())
			}
		}
	}
}
