package executor

import (
	"context"
	"fmt"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// startChild persists the sub_operation node as running, then starts the
// child operation and records its id. A restart between the two finds the
// child again through its idempotency key.
func (l *loop) startChild(ctx context.Context, st *state, n *capstan.PlanNode) error {
	if l.e.cfg.Hooks == nil {
		return nil
	}
	if !l.window.Open() {
		// No side effect outside the window: the node stays running
		// without a child, and the step after the next renewal starts it
		// (a fresh read touches it again: resumeTouched).
		return capstan.Errorf(capstan.EUNAVAILABLE, "the shard's window has closed: sub-operation %s starts after a renewal", n.ID)
	}
	run := st.runs[n.ID]
	id, err := l.e.cfg.Hooks.StartChild(ctx, l.org, st.op, n, run.Attempts, l.fence)
	if capstan.IsFenced(err) {
		return err // deposed: the loop stops, and the new owner starts the child
	}
	ch := l.change(st.op)
	if err != nil {
		if err := run.Move(capstan.NodeFailed); err != nil {
			return err
		}
		run.Error = "sub-operation could not start: " + capstan.ErrorMessage(err)
		run.FinishedAt = l.now()
		ch.Events = append(ch.Events, l.event(event.Node{What: "failed", Node: n.ID, Reason: run.Error}))
		st.set(run)
		if err := l.fail(st, ch, n.ID, run.Error); err != nil {
			return err
		}
	} else {
		run.ChildOperationID = id
		ch.Events = append(ch.Events, l.event(event.SubOperationStarted{Node: n.ID, Child: capstan.OperationGID(id)}))
	}
	ch.NodeRuns = append(ch.NodeRuns, run)
	return l.commit(ctx, ch)
}

// followChild concludes a sub_operation node once its child ended: the
// created resource becomes the binding's provider (the plan's binding
// resolved, the consumer's relationship to it added, in the same commit
// as binding.resolved), or the child's failure fails the node.
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
	failure := "sub-operation " + capstan.OperationGID(child.ID) + " ended " + string(child.Status)
	if child.Status == capstan.OperationSucceeded {
		failure, err = l.childCreated(ctx, st, n, child, ch)
		if err != nil {
			return false, err
		}
	}
	if failure == "" {
		if err := moveAll(&run, capstan.NodeVerifying, capstan.NodeSucceeded); err != nil {
			return false, err
		}
		ch.Events = append(ch.Events, l.event(event.Node{What: "succeeded", Node: n.ID, Child: capstan.OperationGID(child.ID)}))
	} else {
		if err := run.Move(capstan.NodeFailed); err != nil {
			return false, err
		}
		run.Error = failure
		ch.Events = append(ch.Events, l.event(event.Node{What: "failed", Node: n.ID, Reason: run.Error}))
		st.set(run)
		if err := l.fail(st, ch, n.ID, run.Error); err != nil {
			return false, err
		}
	}
	ch.NodeRuns = append(ch.NodeRuns, run)
	return true, l.commit(ctx, ch)
}

// childCreated adds to ch what a succeeded child's resource changes: the
// evidence that it was created, the parent plan's binding resolved to it
// and the parent's resource relating to it. It returns why the node fails
// instead when the child did not leave an active resource.
func (l *loop) childCreated(ctx context.Context, st *state, n *capstan.PlanNode, child *capstan.Operation, ch *capstan.OperationChange) (string, error) {
	store, childID := l.e.cfg.Store, capstan.OperationGID(child.ID)
	if child.ResourceKey == "" {
		return "sub-operation " + childID + " created no resource", nil
	}
	r, err := store.GetResourceByKey(ctx, l.org, child.ResourceKey)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return "sub-operation " + childID + " left no resource " + child.ResourceKey, nil
	}
	if err != nil {
		return "", err
	}
	if r.LifecycleStatus != capstan.LifecycleActive {
		return fmt.Sprintf("resource %s is %s after sub-operation %s", r.Key(), r.LifecycleStatus, childID), nil
	}
	ch.Evidence = append(ch.Evidence, capstan.Evidence{ProducedBy: n.ID, Capability: n.SubOperation.ExpectedCapability, Item: "provider-created",
		Result: capstan.EvidencePassed, ObservedAt: *l.now(), Source: map[string]any{"type": "sub_operation", "operation": childID,
			"resource": r.Key(), "resource_id": capstan.GlobalID(capstan.KindResource, r.ID)}})
	resolved := event.Binding{Node: n.ID, Binding: n.SubOperation.Requirement, Provider: r.Key(),
		Resource: capstan.GlobalID(capstan.KindResource, r.ID), Child: childID}
	if n.SubOperation.Requirement == "" {
		ch.Events = append(ch.Events, l.event(resolved))
		return "", nil
	}
	plan, err := store.GetPlan(ctx, l.org, st.op.PlanID)
	if err != nil {
		return "", err
	}
	b, err := plan.ResolveBySubOperation(n.SubOperation.Requirement, r, n.SubOperation.ExpectedCapability, child.ID)
	if err != nil {
		return capstan.ErrorMessage(err), nil
	}
	ch.Plan = plan
	resolved.Reason = b.Reason
	ch.Events = append(ch.Events, l.event(resolved))
	if st.op.ResourceKey == "" {
		return "", nil
	}
	consumer, err := store.GetResourceByKey(ctx, l.org, st.op.ResourceKey)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return "", nil // the operation changes a resource it has not begun: nothing relates yet
	}
	if err != nil {
		return "", err
	}
	consumer.Relationships = capstan.AddRelationship(consumer.Relationships, capstan.BindingRelationship(b.Requirement), r.Key())
	ch.Resources = append(ch.Resources, consumer)
	return "", nil
}

// moveAll moves a node run through statuses in order.
func moveAll(run *capstan.OperationNodeRun, to ...capstan.NodeRunStatus) error {
	for _, s := range to {
		if err := run.Move(s); err != nil {
			return err
		}
	}
	return nil
}

// cancelChildren asks the children of an operation that is ending to
// stop: those of running nodes (a cancel) and of nodes its failure
// cancelled. A child that ended already is left as it is.
func (l *loop) cancelChildren(ctx context.Context, st *state) {
	if l.e.cfg.Hooks == nil {
		return
	}
	for _, r := range st.runs {
		if r.ChildOperationID != "" && (r.Status == capstan.NodeRunning || r.Status == capstan.NodeCancelled) {
			if child, err := l.e.cfg.Store.GetOperation(ctx, l.org, r.ChildOperationID); err == nil && child.Status.Terminal() {
				continue // ended: nothing to ask of it (and no loop to wake)
			}
			if err := l.e.cfg.Hooks.CancelChild(ctx, l.org, r.ChildOperationID); err != nil {
				l.e.cfg.Log.Warn("cancelling a child operation failed", "operation", l.opID, "child", r.ChildOperationID, "err", err.Error())
			}
		}
	}
}
