package capstan

import "slices"

// Action names something a caller asks Capstan to do. The service checks
// every mutation against ActionRoles, and the API tells a client the same
// verdicts (Viewer.permissions, Gate.viewerMayApprove, …) so that a
// console hides or disables what a role may not do without keeping a copy
// of the policy.
type Action string

// Actions that depend on the caller's roles alone.
const (
	ActionCreateIntent        Action = "CREATE_INTENT"
	ActionPlanIntent          Action = "PLAN_INTENT"
	ActionEditPlan            Action = "EDIT_PLAN"
	ActionStartOperation      Action = "START_OPERATION"
	ActionRetryNode           Action = "RETRY_NODE"
	ActionRecordIntervention  Action = "RECORD_INTERVENTION"
	ActionCancelOperation     Action = "CANCEL_OPERATION"
	ActionProposePatch        Action = "PROPOSE_PATCH"
	ActionWithdrawPatch       Action = "WITHDRAW_PATCH"
	ActionRevertPatch         Action = "REVERT_PATCH"
	ActionPutSecret           Action = "PUT_SECRET"
	ActionListSecrets         Action = "LIST_SECRETS"
	ActionImportCatalog       Action = "IMPORT_CATALOG"
	ActionInstallScenarioPack Action = "INSTALL_SCENARIO_PACK"
	ActionAssessResource      Action = "ASSESS_RESOURCE"
	ActionPauseAssessments    Action = "PAUSE_ASSESSMENTS"
)

// Actions whose verdict also depends on the object: a gate's required
// roles, a patch's approval rules and author, an operation's environment.
const (
	ActionDecideGate   Action = "DECIDE_GATE"
	ActionDecidePatch  Action = "DECIDE_PATCH"
	ActionRevealSecret Action = "REVEAL_SECRET"
)

var operatorAndUp = []string{RoleOperator, RoleSRE, RolePlatformAdmin}

// ActionRole names the roles that may take a role-only action.
type ActionRole struct {
	Action Action
	Roles  []string
}

// ActionRoles are the roles that may take each role-only action (admin
// holds every role). The order is the order Viewer.permissions lists.
var ActionRoles = []ActionRole{
	{ActionCreateIntent, operatorAndUp},
	{ActionPlanIntent, operatorAndUp},
	{ActionEditPlan, operatorAndUp},
	{ActionStartOperation, operatorAndUp},
	{ActionRetryNode, operatorAndUp},
	{ActionRecordIntervention, operatorAndUp},
	{ActionCancelOperation, operatorAndUp},
	{ActionProposePatch, PatchProposerRoles},
	{ActionWithdrawPatch, PatchProposerRoles},
	{ActionRevertPatch, PatchProposerRoles},
	{ActionPutSecret, []string{RoleAdmin, RolePlatformAdmin}},
	{ActionListSecrets, []string{RoleAdmin, RolePlatformAdmin, RoleSRE, RoleOperator}},
	{ActionImportCatalog, []string{RolePlatformAdmin}},
	{ActionInstallScenarioPack, []string{RolePlatformAdmin}},
	{ActionAssessResource, operatorAndUp},
	{ActionPauseAssessments, []string{RoleSRE, RolePlatformAdmin}},
}

// RolesFor returns the roles that may take a role-only action (nil for an
// action that depends on its object).
func RolesFor(act Action) []string {
	i := slices.IndexFunc(ActionRoles, func(r ActionRole) bool { return r.Action == act })
	if i < 0 {
		return nil
	}
	return ActionRoles[i].Roles
}

// May decides a role-only action: nil, or EFORBIDDEN naming the roles it
// needs. An action that depends on its object is refused here: its own
// check (GateDecider, PlanPatch.CheckDecider, MayRevealIn) decides it.
func (a *Actor) May(act Action) error {
	roles := RolesFor(act)
	if roles == nil {
		return Errorf(EFORBIDDEN, "%s is decided per object, not by role alone", act)
	}
	if !a.HasRole(roles...) {
		return Errorf(EFORBIDDEN, "this needs one of the roles %v", roles)
	}
	return nil
}

// Permission is a verdict on one action for one caller: allowed, or not
// with the reason a person reads (the refusal's message).
type Permission struct {
	Action  Action
	Allowed bool
	Reason  string
}

// PermissionOf turns a check's error into a verdict.
func PermissionOf(act Action, err error) Permission {
	if err != nil {
		return Permission{Action: act, Reason: ErrorMessage(err)}
	}
	return Permission{Action: act, Allowed: true}
}

// Permissions lists a's verdict on every role-only action.
func (a *Actor) Permissions() []Permission {
	out := make([]Permission, 0, len(ActionRoles))
	for _, r := range ActionRoles {
		out = append(out, PermissionOf(r.Action, a.May(r.Action)))
	}
	return out
}
