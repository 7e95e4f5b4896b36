package service

import (
	"context"

	"github.com/capstan-dev/capstan"
)

// The caller's verdicts on actions that depend on their object: the same
// checks the mutations make (GateDecider, StarterMayDecide,
// PlanPatch.CheckDecider, capstan.MayRevealIn), asked without acting, so a
// client shows a button only to those who may press it and says why to
// the others.

// GatePermissions says whether the caller may approve and reject gate g.
func (s *Service) GatePermissions(ctx context.Context, g capstan.Gate) (approve, reject capstan.Permission, err error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return approve, reject, err
	}
	op, env, err := s.operationEnvironment(ctx, a.OrganizationID, g.OperationID)
	if err != nil {
		return approve, reject, err
	}
	_, decider := GateDecider(g, a)
	approve = capstan.PermissionOf(capstan.ActionDecideGate, decider)
	reject = approve
	if decider == nil {
		approve = capstan.PermissionOf(capstan.ActionDecideGate, StarterMayDecide(op.Actor, a.ID, true, capstan.IsProduction(env)))
	}
	return approve, reject, nil
}

// PatchPermission says whether the caller may decide patch p (on the
// digest it has now).
func (s *Service) PatchPermission(ctx context.Context, p *capstan.PlanPatch) (capstan.Permission, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return capstan.Permission{}, err
	}
	return capstan.PermissionOf(capstan.ActionDecidePatch, p.CheckDecider(a, p.Digest)), nil
}

// RevealPermission says whether the caller may reveal artifact art (with a
// reason): only a secret artifact, only with a role the reveal policy
// grants in its operation's environment.
func (s *Service) RevealPermission(ctx context.Context, art capstan.Artifact) (capstan.Permission, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return capstan.Permission{}, err
	}
	if art.Sensitivity != capstan.SensitivitySecret {
		return capstan.PermissionOf(capstan.ActionRevealSecret,
			capstan.Errorf(capstan.EINVALID, "artifact %s is %s, not secret: there is nothing to reveal", art.Name, art.Sensitivity)), nil
	}
	_, env, err := s.operationEnvironment(ctx, a.OrganizationID, art.OperationID)
	if err != nil {
		return capstan.Permission{}, err
	}
	return capstan.PermissionOf(capstan.ActionRevealSecret, capstan.MayRevealIn(a, env)), nil
}

// operationEnvironment loads an operation and its intent's environment.
func (s *Service) operationEnvironment(ctx context.Context, org, opID string) (*capstan.Operation, string, error) {
	op, err := s.Store.GetOperation(ctx, org, opID)
	if err != nil {
		return nil, "", err
	}
	in, err := s.Store.GetIntent(ctx, org, op.IntentID)
	if err != nil {
		return nil, "", err
	}
	return op, in.Environment(), nil
}
