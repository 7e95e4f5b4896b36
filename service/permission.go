package service

import (
	"context"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/secret"
)

// The caller's verdicts on actions that depend on their object: the same
// checks the mutations make (GateDecider, StarterMayDecide,
// PlanPatch.CheckDecider, capstan.MayRevealIn), in the same order, asked
// without acting, so a client shows a button only to those who may press
// it and says why to the others. The verdicts are pure; OperationScene
// reads what they need of the operation (once per query in the resolver).

// OperationScene is what verdicts on an operation's gates and artifacts
// depend on: who started it, in which environment.
type OperationScene struct {
	Starter     string
	Environment string
	// Production says whether Environment is declared production.
	Production bool
	Status     capstan.OperationStatus
}

// OperationScene reads an operation's starter and its intent's environment.
func (s *Service) OperationScene(ctx context.Context, opID string) (OperationScene, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return OperationScene{}, err
	}
	op, err := s.Store.GetOperation(ctx, a.OrganizationID, opID)
	if err != nil {
		return OperationScene{}, err
	}
	in, err := s.Store.GetIntent(ctx, a.OrganizationID, op.IntentID)
	if err != nil {
		return OperationScene{}, err
	}
	return OperationScene{Starter: op.Actor, Environment: in.Environment(), Production: s.Production.Is(in.Environment()), Status: op.Status}, nil
}

// GateVerdicts says whether a may approve and reject gate g of an
// operation in sc (decideGate's checks: GateDecider, then, to approve,
// StarterMayDecide).
func GateVerdicts(a *capstan.Actor, g capstan.Gate, sc OperationScene) (approve, reject capstan.Permission) {
	_, decider := GateDecider(g, a)
	reject = capstan.PermissionOf(capstan.ActionDecideGate, decider)
	if decider != nil {
		return reject, reject
	}
	approve = capstan.PermissionOf(capstan.ActionDecideGate, StarterMayDecide(sc.Starter, a.ID, true, sc.Production))
	return approve, reject
}

// PatchVerdict says whether a may approve patch p of an operation in sc
// on the digest it has now (decidePlanPatch's checks: CheckDecider, then
// StarterMayApprovePatch).
func PatchVerdict(a *capstan.Actor, p *capstan.PlanPatch, sc OperationScene) capstan.Permission {
	err := p.CheckDecider(a, p.Digest)
	if err == nil {
		err = StarterMayApprovePatch(sc.Starter, a.ID, true, sc.Production, p)
	}
	return capstan.PermissionOf(capstan.ActionDecidePatch, err)
}

// StarterMayApprovePatch refuses, in prod, an approval by the operation's
// starter of a patch that changes one of its gates (FORBIDDEN): the gate's
// own rule (StarterMayDecide) would otherwise be crossed through the
// patch's gate rule. A rejection is always taken.
func StarterMayApprovePatch(starter, actor string, approve, prod bool, p *capstan.PlanPatch) error {
	if !prod || !approve || actor != starter {
		return nil
	}
	for _, r := range p.Approvals {
		if strings.HasPrefix(r.Rule, "gate:") {
			return capstan.Errorf(capstan.EFORBIDDEN, "%s started this operation: in prod a patch that changes its gate %s needs an approver other than its starter (the starter may still reject)", actor, strings.TrimPrefix(r.Rule, "gate:"))
		}
	}
	return nil
}

// RevealVerdict says whether a may reveal artifact art of an operation in
// sc, given a reason (revealSecret's checks, in its order: the role in
// the environment, then a secret artifact, then one the store keeps).
func RevealVerdict(a *capstan.Actor, art capstan.Artifact, sc OperationScene) capstan.Permission {
	if err := capstan.MayRevealIn(a, sc.Production); err != nil {
		return capstan.PermissionOf(capstan.ActionRevealSecret, err)
	}
	if art.Sensitivity != capstan.SensitivitySecret {
		return capstan.PermissionOf(capstan.ActionRevealSecret,
			capstan.Errorf(capstan.EINVALID, "artifact %s is %s, not secret: there is nothing to reveal", art.Name, art.Sensitivity))
	}
	if _, ok := secret.ParseRef(art.StorageRef); !ok {
		return capstan.PermissionOf(capstan.ActionRevealSecret,
			capstan.Errorf(capstan.EUNAVAILABLE, "artifact %s was kept before the secret store and cannot be revealed", art.Name))
	}
	return capstan.PermissionOf(capstan.ActionRevealSecret, nil)
}

// Editable says whether a plan takes edits (CONFLICT saying why not): a
// started plan changes only through a PlanPatch (invariant 4).
func Editable(plan *capstan.Plan) error {
	if !plan.Status.Editable() {
		return capstan.Errorf(capstan.ECONFLICT, "%s is %s: a started plan changes only through a PlanPatch (invariant 4)", capstan.Named("plan", plan.ID), plan.Status)
	}
	return nil
}

// MayWithdraw says whether a may withdraw patch p (withdrawPlanPatch's
// check after the role): its author, anyone for an analyzer's proposal, a
// platform admin.
func MayWithdraw(a *capstan.Actor, p *capstan.PlanPatch) error {
	if p.Author != a.ID && !capstan.IsAgent(p.Author) && !a.HasRole(capstan.RolePlatformAdmin) {
		return capstan.Errorf(capstan.EFORBIDDEN, "only %s (its author) or a platform admin withdraws this patch", p.Author)
	}
	return nil
}

// WithdrawVerdict says whether a may withdraw patch p now.
func WithdrawVerdict(a *capstan.Actor, p *capstan.PlanPatch) capstan.Permission {
	err := a.May(capstan.ActionWithdrawPatch)
	if err == nil {
		err = MayWithdraw(a, p)
	}
	if err == nil && p.Status != capstan.PatchProposed {
		err = capstan.Errorf(capstan.ECONFLICT, "%s is %s: only a proposed patch is withdrawn", capstan.Named("plan patch", p.ID), p.Status)
	}
	return capstan.PermissionOf(capstan.ActionWithdrawPatch, err)
}

// RevertVerdict says whether a may revert patch p of an operation in sc
// now (revertPlanPatch's role, status and operation checks; what the
// inverse would change is judged when it is proposed).
func RevertVerdict(a *capstan.Actor, p *capstan.PlanPatch, sc OperationScene) capstan.Permission {
	err := a.May(capstan.ActionRevertPatch)
	if err == nil && p.Status != capstan.PatchApplied {
		err = capstan.Errorf(capstan.ECONFLICT, "%s is %s: only an applied patch is reverted", capstan.Named("plan patch", p.ID), p.Status)
	}
	if err == nil && sc.Status.Terminal() {
		err = capstan.Errorf(capstan.ECONFLICT, "%s is %s: a finished operation takes no patch", capstan.Named("operation", p.OperationID), sc.Status)
	}
	return capstan.PermissionOf(capstan.ActionRevertPatch, err)
}

// StartVerdict says whether a may start plan p of intent in now.
func StartVerdict(a *capstan.Actor, p *capstan.Plan, in *capstan.Intent) capstan.Permission {
	err := a.May(capstan.ActionStartOperation)
	if err == nil {
		err = Startable(p, in)
	}
	return capstan.PermissionOf(capstan.ActionStartOperation, err)
}

// EditVerdict says whether a may edit plan p now.
func EditVerdict(a *capstan.Actor, p *capstan.Plan) capstan.Permission {
	err := a.May(capstan.ActionEditPlan)
	if err == nil {
		err = Editable(p)
	}
	return capstan.PermissionOf(capstan.ActionEditPlan, err)
}
