package service

import (
	"context"
	"errors"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// maxFreshTries bounds how often a write reads, decides and commits
// again after losing a race with another writer (the executor's own
// writes of a resource: BeginChange, EndChange).
const maxFreshTries = 8

// onFreshState runs decide (which reads the state it needs, decides, and
// commits) again whenever its commit lost to a concurrent change.
func onFreshState(decide func() error) error {
	var err error
	for range maxFreshTries {
		if err = decide(); !capstan.IsStale(err) {
			return err
		}
	}
	return err
}

// steer loads an operation and one node's run for a steering action
// (capstan.ActionRecordIntervention or capstan.ActionRetryNode).
func (s *Service) steer(ctx context.Context, steerAction capstan.Action, opID, nodeID string) (*capstan.Actor, *capstan.Operation, *capstan.PlanNode, capstan.OperationNodeRun, error) {
	var run capstan.OperationNodeRun
	a, err := requireAction(ctx, steerAction)
	if err != nil {
		return nil, nil, nil, run, err
	}
	op, err := s.Store.GetOperation(ctx, a.OrganizationID, opID)
	if err != nil {
		return nil, nil, nil, run, err
	}
	if op.Status.Terminal() {
		return nil, nil, nil, run, capstan.Errorf(capstan.ECONFLICT, "%s is %s", capstan.Named("operation", opID), op.Status)
	}
	plan, err := s.Store.GetPlan(ctx, a.OrganizationID, op.PlanID)
	if err != nil {
		return nil, nil, nil, run, err
	}
	node := plan.Node(nodeID)
	if node == nil {
		return nil, nil, nil, run, capstan.Errorf(capstan.ENOTFOUND, "plan has no node %s", nodeID)
	}
	recs, err := s.Store.OperationRecords(ctx, a.OrganizationID, opID, capstan.RecordNodeRun)
	if err != nil {
		return nil, nil, nil, run, err
	}
	return a, op, node, nodeRun(recs, nodeID), nil
}

// commit writes a change the service makes itself: a proposal, a
// reveal's record (see DecideCommand for a person's changes).
func (s *Service) commit(ctx context.Context, org string, ch *capstan.OperationChange) error {
	return s.Store.ApplyOperationChange(ctx, org, ch)
}

// RecordIntervention records that a person fixed a node by hand. It never
// skips verification (invariant 8): the node's probes run again and only
// passed evidence lets the operation continue.
func (s *Service) RecordIntervention(ctx context.Context, opID, nodeID, typ, note string) (*capstan.Intervention, error) {
	a, err := requireAction(ctx, capstan.ActionRecordIntervention)
	if err != nil {
		return nil, err
	}
	if typ != "manually_fixed" {
		return nil, capstan.Errorf(capstan.EINVALID, "intervention type %q cannot change a node; manually_fixed can (and is verified)", typ)
	}
	if _, err := s.submit(ctx, opID, capstan.CommandIntervene, capstan.CommandArgs{Node: nodeID, Type: typ, Note: note}); err != nil {
		return nil, err
	}
	recs, err := s.Store.OperationRecords(ctx, a.OrganizationID, opID)
	if err != nil {
		return nil, err
	}
	for i := len(recs.Interventions) - 1; i >= 0; i-- {
		if iv := recs.Interventions[i]; iv.TargetNode == nodeID && iv.Actor == a.ID {
			return &iv, nil
		}
	}
	return nil, capstan.Errorf(capstan.EINTERNAL, "the intervention on %s was applied but is not recorded", nodeID)
}

func (s *Service) recordIntervention(ctx context.Context, opID, nodeID, typ, note string) (*capstan.OperationChange, error) {
	a, op, node, run, err := s.steer(ctx, capstan.ActionRecordIntervention, opID, nodeID)
	if err != nil {
		return nil, err
	}
	if typ != "manually_fixed" {
		return nil, capstan.Errorf(capstan.EINVALID, "intervention type %q cannot change a node; manually_fixed can (and is verified)", typ)
	}
	if run.Status == capstan.NodeFailed {
		if err := run.Move(capstan.NodeWaitingIntervention); err != nil {
			return nil, err // cannot happen: failed -> waiting_intervention is legal
		}
	}
	if err := run.Move(capstan.NodeVerifying); err != nil {
		return nil, capstan.Errorf(capstan.ECONFLICT, "node %s is %s, not waiting for an intervention", nodeID, run.Status)
	}
	var verify []string
	for _, p := range node.RunProbes() {
		verify = append(verify, p.Name)
	}
	iv := capstan.Intervention{Type: typ, Actor: a.ID, TargetNode: nodeID, Note: note, RequiresVerification: verify, At: s.Now().UTC()}
	if err := resume(op); err != nil {
		return nil, err
	}
	return &capstan.OperationChange{Operation: op, NodeRuns: []capstan.OperationNodeRun{run}, Interventions: []capstan.Intervention{iv},
		Events: []capstan.OperationEvent{event.Record(a.ID, event.Intervention{Node: nodeID, Type: typ, Verify: verify})}}, nil
}

// RetryNode gives a failed node another attempt.
func (s *Service) RetryNode(ctx context.Context, opID, nodeID string) (*capstan.Operation, error) {
	a, err := requireAction(ctx, capstan.ActionRetryNode)
	if err != nil {
		return nil, err
	}
	if _, err := s.submit(ctx, opID, capstan.CommandRetryNode, capstan.CommandArgs{Node: nodeID}); err != nil {
		return nil, err
	}
	return s.Store.GetOperation(ctx, a.OrganizationID, opID)
}

func (s *Service) retryNode(ctx context.Context, opID, nodeID string) (*capstan.OperationChange, error) {
	a, op, _, run, err := s.steer(ctx, capstan.ActionRetryNode, opID, nodeID)
	if err != nil {
		return nil, err
	}
	if err := run.Move(capstan.NodeRetrying); err != nil {
		return nil, capstan.Errorf(capstan.ECONFLICT, "node %s is %s: only a failed node is retried", nodeID, run.Status)
	}
	run.Error = ""
	if err := resume(op); err != nil {
		return nil, err
	}
	return &capstan.OperationChange{Operation: op, NodeRuns: []capstan.OperationNodeRun{run},
		Events: []capstan.OperationEvent{event.Record(a.ID, event.Node{What: "retry_requested", Node: nodeID})}}, nil
}

// CancelOperation asks a running operation to stop: its jobs are killed
// and its unfinished nodes end cancelled.
func (s *Service) CancelOperation(ctx context.Context, opID, reason string) (*capstan.Operation, error) {
	a, err := requireAction(ctx, capstan.ActionCancelOperation)
	if err != nil {
		return nil, err
	}
	if _, err := s.submit(ctx, opID, capstan.CommandCancel, capstan.CommandArgs{Reason: reason}); err != nil {
		return nil, err
	}
	return s.Store.GetOperation(ctx, a.OrganizationID, opID)
}

// CancelChild asks the owner of the child operation of a cancelled (or
// ended) parent to cancel it, without waiting: the parent follows the
// child's end.
func (s *Service) CancelChild(ctx context.Context, org, opID string) error {
	err := s.send(ctx, org, opID, "executor", capstan.CommandCancel, capstan.CommandArgs{Reason: "its parent operation ended"})
	if capstan.ErrorCode(err) == capstan.ECONFLICT && !errors.Is(err, capstan.ErrStale) {
		return nil // ended already: nothing to cancel
	}
	return err
}

func (s *Service) cancel(ctx context.Context, org, actor, opID, reason string) (*capstan.OperationChange, error) {
	op, err := s.Store.GetOperation(ctx, org, opID)
	if err != nil {
		return nil, err
	}
	if op.Status == capstan.OperationPending {
		err = op.Move(capstan.OperationCancelled)
	} else {
		err = op.Move(capstan.OperationCancelling)
	}
	if err != nil {
		return nil, capstan.Errorf(capstan.ECONFLICT, "%s is %s and cannot be cancelled", capstan.Named("operation", opID), op.Status)
	}
	ch := &capstan.OperationChange{Operation: op,
		Events: []capstan.OperationEvent{event.Record(actor, event.Operation{What: string(op.Status), Reason: reason})}}
	if op.Status == capstan.OperationCancelled { // ended before it began: its intent and plan follow in this commit
		if _, err := capstan.FollowInto(ctx, s.Store, org, ch, actor); err != nil {
			return nil, err
		}
	}
	return ch, nil
}
