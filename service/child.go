package service

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/capstan-dev/capstan"
)

// StartChild starts the child operation of a sub_operation node: a child
// intent for the chosen scenario (an audit object like any intent), with
// the providers the parent's plan already resolved for the child's own
// requirements given explicitly, planned and started. The child's
// idempotency key (parent, node, attempt: ChildKey) makes this safe to
// repeat after a crash, and from two loops at once: each gets the
// operation that won the key. The start commits under fence (the
// parent's executor's grant), so a deposed executor starts no child: its
// intent and plan stay, planned, unstarted.
func (s *Service) StartChild(ctx context.Context, org string, parent *capstan.Operation, node *capstan.PlanNode, attempt int, fence *capstan.Fence) (string, error) {
	key := ChildKey(parent.ID, node.ID, attempt)
	if op, err := s.startedChild(ctx, org, parent.ID, node.ID, attempt); err == nil || capstan.ErrorCode(err) != capstan.ENOTFOUND {
		if err != nil {
			return "", err
		}
		return op.ID, nil
	}
	plan, err := s.Store.GetPlan(ctx, org, parent.PlanID)
	if err != nil {
		return "", err
	}
	pin, err := s.Store.GetIntent(ctx, org, parent.IntentID)
	if err != nil {
		return "", err
	}
	sc, err := s.Store.GetScenario(ctx, org, node.SubOperation.Scenario)
	if err != nil {
		return "", err
	}
	prefix := node.ID + "/"
	if b := plan.Binding(node.SubOperation.Requirement); b != nil && node.SubOperation.Requirement != "" {
		prefix = b.ID + "/"
	}
	providers := map[string]string{}
	for _, b := range plan.Bindings {
		if rest, ok := strings.CutPrefix(b.ID, prefix); ok && !strings.Contains(rest, "/") && b.Provider != nil {
			providers[rest] = b.Provider.ResourceKey
		}
	}
	ctx = capstan.WithActor(ctx, &capstan.Actor{ID: parent.Actor, OrganizationID: org, Roles: []string{capstan.RoleOperator}})
	in := &capstan.Intent{Actor: parent.Actor, Action: sc.Action, TargetResourceType: sc.TargetResourceType,
		DesiredResult: map[string]any{"parent_operation": capstan.OperationGID(parent.ID), "node": node.ID, "name": childResourceName(parent, node)},
		Constraints:   childConstraints(pin, plan.Binding(node.SubOperation.Requirement)), Providers: providers, Scenario: sc.Ref(), Mode: capstan.ModeSimple, Status: capstan.IntentDraft}
	if err := in.Move(capstan.IntentSubmitted); err != nil {
		return "", err
	}
	if err := s.Store.CreateIntent(ctx, org, in); err != nil {
		return "", err
	}
	child, err := s.PlanIntent(ctx, in.ID)
	if err != nil {
		return "", err
	}
	if child.Status != capstan.PlanReady {
		return "", capstan.Errorf(capstan.EINVALID, "the child plan of %s is %s: %s", sc.Ref(), child.Status, strings.Join(child.Problems, "; "))
	}
	if in, err = s.Store.GetIntent(ctx, org, in.ID); err != nil { // planned now, at its new version
		return "", err
	}
	// Another start of this child may win the key meanwhile: startPlan
	// returns its operation (sameStart), and this start's intent and plan
	// stay, planned, unstarted.
	op, err := s.startPlan(ctx, org, parent.Actor, child, in, key, parent.ID, fence)
	if err != nil {
		return "", err
	}
	return op.ID, nil
}

// ChildKey is the idempotency key of the child a sub_operation node's
// attempt starts: one child per attempt, so a node a patch reset (its
// next attempt) starts a child of its own, and repeats of one attempt
// find the same.
func ChildKey(parentID, nodeID string, attempt int) string {
	return fmt.Sprintf("%s/%s/%d", parentID, nodeID, attempt)
}

// legacyChildKey is the key releases before the attempt was in it gave
// a child: parent/node. Such a child is its node's first attempt's (they
// started a node's child once, whatever its attempt).
func legacyChildKey(parentID, nodeID string) string { return parentID + "/" + nodeID }

// startedChild finds the child the attempt started already (ENOTFOUND
// when none), under its key or, for a first attempt, the older key.
func (s *Service) startedChild(ctx context.Context, org, parentID, nodeID string, attempt int) (*capstan.Operation, error) {
	op, err := s.Store.GetOperationByKey(ctx, org, ChildKey(parentID, nodeID, attempt))
	if capstan.ErrorCode(err) == capstan.ENOTFOUND && attempt <= 1 {
		return s.Store.GetOperationByKey(ctx, org, legacyChildKey(parentID, nodeID))
	}
	return op, err
}

// childConstraints are the parent intent's, with the environment and
// region the binding asks of the provider the child creates.
func childConstraints(parent *capstan.Intent, b *capstan.ResourceBinding) map[string]any {
	c := maps.Clone(parent.Constraints)
	if c == nil {
		c = map[string]any{}
	}
	if b != nil {
		for _, k := range []string{"environment", "region"} {
			if v, ok := b.Constraints[k]; ok {
				c[k] = v
			}
		}
	}
	return c
}

// childResourceName names the resource a sub_operation node creates.
func childResourceName(parent *capstan.Operation, node *capstan.PlanNode) string {
	return fmt.Sprintf("%s-%s", node.ID, parent.ID[len(parent.ID)-8:])
}
