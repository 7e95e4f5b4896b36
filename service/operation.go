package service

import (
	"context"
	"slices"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// StartOperation starts a ready plan. The same idempotency key returns
// the same operation, never a second run.
func (s *Service) StartOperation(ctx context.Context, planID, idempotencyKey string) (*capstan.Operation, error) {
	a, err := requireAction(ctx, capstan.ActionStartOperation)
	if err != nil {
		return nil, err
	}
	org := a.OrganizationID
	if len(idempotencyKey) > capstan.MaxIdempotencyKey {
		return nil, capstan.Errorf(capstan.EINVALID, "an idempotency key of %d bytes is past the %d allowed", len(idempotencyKey), capstan.MaxIdempotencyKey)
	}
	if idempotencyKey != "" {
		if op, err := s.Store.GetOperationByKey(ctx, org, idempotencyKey); err == nil {
			return sameStart(op, planID, "", idempotencyKey)
		}
	}
	plan, err := s.Store.GetPlan(ctx, org, planID)
	if err != nil {
		return nil, err
	}
	in, err := s.Store.GetIntent(ctx, org, plan.IntentID)
	if err != nil {
		return nil, err
	}
	return s.startPlan(ctx, org, a.ID, plan, in, idempotencyKey, "", nil)
}

// sameStart returns op, the operation an idempotency key started before,
// when it was a start of the same plan, or of the same parent's child
// (each start of a child plans it anew: two loops starting one child at
// once make two plans, and the one whose operation won the key is the
// child); a key used for another plan is CONFLICT, naming what it
// started (a retry is the same request; another plan with an old key is
// a mistake that must not pass for done).
func sameStart(op *capstan.Operation, planID, parentID, key string) (*capstan.Operation, error) {
	if op.PlanID != planID && (parentID == "" || op.ParentID != parentID) {
		return nil, capstan.Errorf(capstan.ECONFLICT, "idempotency key %q started %s of %s: a start of another plan needs a key of its own",
			key, capstan.Named("operation", op.ID), capstan.Named("plan", op.PlanID))
	}
	return op, nil
}

// Startable says whether a plan may start now (CONFLICT saying why not):
// a ready (or approved) plan that is its planned intent's latest.
func Startable(plan *capstan.Plan, in *capstan.Intent) error {
	if plan.Status != capstan.PlanReady && plan.Status != capstan.PlanApproved {
		return capstan.Errorf(capstan.ECONFLICT, "%s is %s: only a ready plan starts", capstan.Named("plan", plan.ID), plan.Status)
	}
	if in.Status != capstan.IntentPlanned || in.LatestPlanID != plan.ID {
		return capstan.Errorf(capstan.ECONFLICT, "%s is %s with %s: only the latest plan of a planned intent starts", capstan.Named("intent", in.ID), in.Status, capstan.Named("plan", in.LatestPlanID))
	}
	return nil
}

// startPlan starts a plan as an operation (a child one when parentID is
// set, under its parent executor's fence).
func (s *Service) startPlan(ctx context.Context, org, actor string, plan *capstan.Plan, in *capstan.Intent, idempotencyKey, parentID string, fence *capstan.Fence) (*capstan.Operation, error) {
	if err := Startable(plan, in); err != nil {
		return nil, err
	}
	if parentID == "" { // a sub-operation's plan was made a moment ago, by its parent's executor
		pl, err := s.planner(ctx, org)
		if err != nil {
			return nil, err
		}
		if err := pl.Recheck(ctx, org, plan, in); err != nil {
			return nil, err
		}
	}
	if err := plan.Move(capstan.PlanRunning); err != nil {
		return nil, err
	}
	if err := in.Move(capstan.IntentExecuting); err != nil {
		return nil, err // cannot fail: the intent is planned (checked above)
	}
	op := &capstan.Operation{IntentID: in.ID, PlanID: plan.ID, PlanRevision: plan.Revision, Action: in.Action,
		Status: capstan.OperationPending, Actor: actor, IdempotencyKey: idempotencyKey, ParentID: parentID,
		ResourceKey: in.TargetKey()}
	events := []capstan.OperationEvent{event.Record(actor, event.Operation{What: "created", Plan: capstan.GlobalID(capstan.KindPlan, plan.ID), Revision: plan.Revision, Parent: capstan.OperationGID(parentID)})}
	if err := s.Store.StartOperation(ctx, org, op, plan, in, events, fence); err != nil {
		if capstan.ErrorCode(err) == capstan.ECONFLICT && idempotencyKey != "" {
			if existing, e2 := s.Store.GetOperationByKey(ctx, org, idempotencyKey); e2 == nil {
				return sameStart(existing, plan.ID, parentID, idempotencyKey)
			}
		}
		return nil, err
	}
	return op, nil // the store wakes this process's executor (live.Store), another's learns of it
}

// DecideGate records an approval or a rejection of a waiting gate. It
// needs the configured number of approvals from distinct actors holding a
// required role; in prod, the actor who started the operation cannot be
// the only approver.
func (s *Service) DecideGate(ctx context.Context, opID, nodeID string, approve bool, comment string) (*capstan.Gate, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.mayDecideGate(ctx, a, opID, nodeID); err != nil {
		return nil, err
	}
	if _, err := s.submit(ctx, opID, capstan.CommandDecideGate, capstan.CommandArgs{Node: nodeID, Approve: approve, Comment: comment}); err != nil {
		return nil, err
	}
	recs, err := s.Store.OperationRecords(ctx, a.OrganizationID, opID, capstan.RecordGate)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(recs.Gates, func(g capstan.Gate) bool { return g.NodeID == nodeID })
	if i < 0 {
		return nil, capstan.Errorf(capstan.EINTERNAL, "the decision on gate %s was applied but the gate is not recorded", nodeID)
	}
	return &recs.Gates[i], nil
}

// mayDecideGate refuses at once (FORBIDDEN) a decider who holds none of
// the gate's required roles, as the plan names them: that needs no state
// of the operation, and is not worth a command. The owner checks again.
func (s *Service) mayDecideGate(ctx context.Context, a *capstan.Actor, opID, nodeID string) error {
	op, err := s.Store.GetOperation(ctx, a.OrganizationID, opID)
	if err != nil {
		return err
	}
	plan, err := s.Store.GetPlan(ctx, a.OrganizationID, op.PlanID)
	if err != nil {
		return err
	}
	n := plan.Node(nodeID)
	if n == nil || n.Gate == nil {
		return capstan.Errorf(capstan.ENOTFOUND, "%s has no gate %s", capstan.Named("operation", opID), nodeID)
	}
	_, err = GateDecider(capstan.Gate{NodeID: nodeID, Spec: *n.Gate, Status: capstan.GateWaiting}, a)
	return err
}

// decideGate decides a gate decision for the operation's owner.
func (s *Service) decideGate(ctx context.Context, opID, nodeID string, approve bool, comment string) (*capstan.OperationChange, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	org := a.OrganizationID
	op, err := s.Store.GetOperation(ctx, org, opID)
	if err != nil {
		return nil, err
	}
	recs, err := s.Store.OperationRecords(ctx, org, opID, capstan.RecordGate, capstan.RecordNodeRun)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(recs.Gates, func(g capstan.Gate) bool { return g.NodeID == nodeID })
	if i < 0 {
		return nil, capstan.Errorf(capstan.ENOTFOUND, "%s has no gate %s", capstan.Named("operation", opID), nodeID)
	}
	gate := recs.Gates[i]
	role, err := GateDecider(gate, a)
	if err != nil {
		return nil, err
	}
	in, err := s.Store.GetIntent(ctx, org, op.IntentID)
	if err != nil {
		return nil, err
	}
	prod := s.Production.Is(in.Environment())
	if err := StarterMayDecide(op.Actor, a.ID, approve, prod); err != nil {
		return nil, err
	}
	plan, err := s.Store.GetPlan(ctx, org, op.PlanID)
	if err != nil {
		return nil, err
	}
	if n := plan.Node(nodeID); approve && n != nil && n.Gate != nil && n.Gate.NoDrift {
		if drift, err := s.unresolvedDrift(ctx, org, plan, op); err != nil {
			return nil, err
		} else if len(drift) > 0 {
			return nil, capstan.Errorf(capstan.ECONFLICT, "gate %s needs no unresolved drift: %s", nodeID, strings.Join(drift, "; "))
		}
	}
	// The decision binds to what the approver saw: the gate's upstream at
	// the operation's revision. A patch that changes it dismisses it.
	digest := capstan.UpstreamDigest(plan, nodeID)
	gate.Decisions = append(gate.Decisions, capstan.GateDecision{Actor: a.ID, Role: role, At: s.Now().UTC(), Approve: approve, Comment: comment, Digest: digest})
	ch := &capstan.OperationChange{Operation: op,
		Events: []capstan.OperationEvent{event.Record(a.ID, event.Gate{What: "decided", Node: nodeID, Approve: &approve, Role: role, Digest: digest})}}
	if outcome := GateOutcome(gate, op.Actor, prod); outcome != "" {
		run := nodeRun(recs, nodeID)
		closed, err := closeGate(outcome, &gate, &run, op, a.ID)
		if err != nil {
			return nil, err
		}
		ch.Events = append(ch.Events, closed)
		ch.NodeRuns = append(ch.NodeRuns, run)
	}
	ch.Gates = []capstan.Gate{gate}
	return ch, nil
}

func nodeRun(recs *capstan.OperationRecords, nodeID string) capstan.OperationNodeRun {
	for _, r := range recs.NodeRuns {
		if r.NodeID == nodeID {
			return r
		}
	}
	return capstan.OperationNodeRun{NodeID: nodeID, Status: capstan.NodePending}
}

// GateDecider is the role with which actor a may decide gate g: ECONFLICT
// when the gate no longer waits or a already decided it, EFORBIDDEN when a
// holds none of its required roles.
func GateDecider(g capstan.Gate, a *capstan.Actor) (string, error) {
	if g.Status != "waiting" {
		return "", capstan.Errorf(capstan.ECONFLICT, "gate %s is %s", g.NodeID, g.Status)
	}
	i := slices.IndexFunc(g.Spec.RequiredRoles, func(r string) bool { return a.HasRole(r) })
	if i < 0 {
		return "", capstan.Errorf(capstan.EFORBIDDEN, "deciding gate %s needs one of the roles %v", g.NodeID, g.Spec.RequiredRoles)
	}
	if slices.ContainsFunc(g.Decisions, func(d capstan.GateDecision) bool { return d.Actor == a.ID && !d.Dismissed }) {
		return "", capstan.Errorf(capstan.ECONFLICT, "%s already decided gate %s", a.ID, g.NodeID)
	}
	return g.Spec.RequiredRoles[i], nil
}

// closeGate applies a gate's outcome ("approved" or "rejected") to the gate,
// its node run and a waiting operation (which runs on: to the next node, or
// to the executor failing or rolling it back), and returns the event that
// says so.
func closeGate(outcome string, gate *capstan.Gate, run *capstan.OperationNodeRun, op *capstan.Operation, actor string) (capstan.OperationEvent, error) {
	gate.Status = capstan.GateStatus(outcome)
	to := capstan.NodeSucceeded
	if outcome != "approved" {
		to = capstan.NodeFailed
		run.Error = "rejected by " + actor
	}
	if err := run.Move(to); err != nil {
		return capstan.OperationEvent{}, capstan.Errorf(capstan.ECONFLICT, "gate %s's node is %s: %s", gate.NodeID, run.Status, capstan.ErrorMessage(err))
	}
	if err := resume(op); err != nil {
		return capstan.OperationEvent{}, err
	}
	return event.Record(actor, event.Gate{What: outcome, Node: gate.NodeID}), nil
}

// resume moves a waiting operation back to running after a person acted
// (a running one stays).
func resume(op *capstan.Operation) error {
	if op.Status != capstan.OperationWaiting {
		return nil
	}
	return op.Move(capstan.OperationRunning)
}

// StarterMayDecide refuses, in prod, an approval by the actor who started
// the operation (FORBIDDEN, saying why): it would not count, and a
// decision that does not count must not look like one that did. A
// rejection by the starter is taken: stopping is always allowed.
func StarterMayDecide(starter, actor string, approve, prod bool) error {
	if prod && approve && actor == starter {
		return capstan.Errorf(capstan.EFORBIDDEN, "%s started this operation: in prod its gates need an approver other than its starter (the starter may still reject)", actor)
	}
	return nil
}

// GateOutcome decides a gate from its decisions: "rejected" on any
// rejection, "approved" once enough distinct approvers agreed (and, in
// prod, not only the operation's own starter), "" while it waits.
func GateOutcome(g capstan.Gate, starter string, prod bool) string {
	need := max(g.Spec.Approvals, 1)
	approvals, others := 0, 0
	for _, d := range g.Decisions {
		if d.Dismissed {
			continue // a patch changed what it approved
		}
		if !d.Approve {
			return "rejected"
		}
		approvals++
		if d.Actor != starter {
			others++
		}
	}
	if approvals >= need && (!prod || others > 0) {
		return "approved"
	}
	return ""
}
