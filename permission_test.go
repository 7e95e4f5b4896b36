package capstan_test

import (
	"slices"
	"testing"

	"github.com/capstan-dev/capstan"
)

func TestPermissionsFollowRoles(t *testing.T) {
	everything := []capstan.Action{}
	for _, r := range capstan.ActionRoles {
		everything = append(everything, r.Action)
	}
	operatorMay := []capstan.Action{capstan.ActionCreateIntent, capstan.ActionPlanIntent, capstan.ActionEditPlan, capstan.ActionStartOperation,
		capstan.ActionRetryNode, capstan.ActionRecordIntervention, capstan.ActionCancelOperation,
		capstan.ActionProposePatch, capstan.ActionWithdrawPatch, capstan.ActionRevertPatch, capstan.ActionListSecrets, capstan.ActionAssessResource}
	sreMay := append(slices.Clone(operatorMay), capstan.ActionPauseAssessments)
	for _, tc := range []struct {
		roles   []string
		allowed []capstan.Action
	}{
		{[]string{"admin"}, everything},
		{[]string{"viewer"}, nil},
		{nil, nil},
		{[]string{"operator"}, operatorMay},
		{[]string{"sre"}, sreMay},
		{[]string{"platform_admin"}, everything},
		{[]string{"viewer", "operator"}, operatorMay},
		{[]string{"dba"}, nil},
	} {
		a := &capstan.Actor{ID: "x", OrganizationID: "o", Roles: tc.roles}
		perms := a.Permissions()
		if len(perms) != len(capstan.ActionRoles) {
			t.Fatalf("%v: %d verdicts, want one per role-only action (%d)", tc.roles, len(perms), len(capstan.ActionRoles))
		}
		for i, p := range perms {
			if p.Action != capstan.ActionRoles[i].Action {
				t.Fatalf("%v: verdict %d is %s, want the table's order", tc.roles, i, p.Action)
			}
			want := slices.Contains(tc.allowed, p.Action)
			if p.Allowed != want {
				t.Errorf("%v may %s = %v, want %v", tc.roles, p.Action, p.Allowed, want)
			}
			if !p.Allowed && p.Reason == "" {
				t.Errorf("%v refused %s without a reason", tc.roles, p.Action)
			}
			if p.Allowed != (a.May(p.Action) == nil) {
				t.Errorf("%v: verdict on %s disagrees with May", tc.roles, p.Action)
			}
		}
	}
}

func TestObjectActionsAreNotDecidedByRole(t *testing.T) {
	a := &capstan.Actor{ID: "x", OrganizationID: "o", Roles: []string{"admin"}}
	for _, act := range []capstan.Action{capstan.ActionDecideGate, capstan.ActionDecidePatch, capstan.ActionRevealSecret} {
		if err := a.May(act); capstan.ErrorCode(err) != capstan.EFORBIDDEN {
			t.Errorf("May(%s) = %v, want FORBIDDEN: it depends on its object", act, err)
		}
	}
}

func TestMayRevealIn(t *testing.T) {
	for _, tc := range []struct {
		roles []string
		env   string
		ok    bool
	}{
		{[]string{"admin"}, "prod", true},
		{[]string{"platform_admin"}, "production", true},
		{[]string{"sre"}, "prod", false},
		{[]string{"sre"}, "staging", true},
		{[]string{"operator"}, "staging", false},
		{[]string{"viewer"}, "dev", false},
	} {
		err := capstan.MayRevealIn(&capstan.Actor{ID: "x", OrganizationID: "o", Roles: tc.roles}, capstan.DefaultProductionEnvironments.Is(tc.env))
		if (err == nil) != tc.ok {
			t.Errorf("%v in %s: %v, want allowed=%v", tc.roles, tc.env, err, tc.ok)
		}
	}
}
