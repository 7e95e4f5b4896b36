package service_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/service"
)

func TestPatchVerdicts(t *testing.T) {
	actor := func(id string, roles ...string) *capstan.Actor {
		return &capstan.Actor{ID: id, OrganizationID: "o", Roles: roles}
	}
	proposed := &capstan.PlanPatch{Meta: capstan.Meta{ID: "p"}, Author: "olga", Status: capstan.PatchProposed}
	analyzed := &capstan.PlanPatch{Meta: capstan.Meta{ID: "p"}, Author: "ai-agent:rules", Status: capstan.PatchProposed}
	applied := &capstan.PlanPatch{Meta: capstan.Meta{ID: "p"}, Author: "olga", Status: capstan.PatchApplied}
	for _, tc := range []struct {
		name     string
		a        *capstan.Actor
		p        *capstan.PlanPatch
		withdraw bool
		revert   bool
	}{
		{"its author withdraws it", actor("olga", "operator"), proposed, true, false},
		{"another operator does not", actor("otto", "operator"), proposed, false, false},
		{"a platform admin does", actor("pat", "platform_admin"), proposed, true, false},
		{"anyone withdraws an analyzer's proposal", actor("otto", "sre"), analyzed, true, false},
		{"a viewer never", actor("victor", "viewer"), analyzed, false, false},
		{"an applied patch is reverted, not withdrawn", actor("olga", "operator"), applied, false, true},
		{"a viewer reverts nothing", actor("victor", "viewer"), applied, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, r := service.WithdrawVerdict(tc.a, tc.p), service.RevertVerdict(tc.a, tc.p, service.OperationScene{Status: capstan.OperationRunning})
			require.Equal(t, tc.withdraw, w.Allowed, w.Reason)
			require.Equal(t, tc.revert, r.Allowed, r.Reason)
			for _, v := range []capstan.Permission{w, r} {
				require.Equal(t, v.Allowed, v.Reason == "", "a refusal says why")
			}
		})
	}
}

func TestFinishedOperationsTakeNoRevert(t *testing.T) {
	applied := &capstan.PlanPatch{Meta: capstan.Meta{ID: "p"}, OperationID: "op", Author: "olga", Status: capstan.PatchApplied}
	v := service.RevertVerdict(&capstan.Actor{ID: "olga", OrganizationID: "o", Roles: []string{"operator"}}, applied, service.OperationScene{Status: capstan.OperationSucceeded})
	require.False(t, v.Allowed)
	require.Contains(t, v.Reason, "a finished operation takes no patch")
}

func TestStarterMayNotApproveAGatePatchInProd(t *testing.T) {
	gatePatch := &capstan.PlanPatch{Approvals: []capstan.ApprovalRule{{Rule: "prod-second-person"}, {Rule: "gate:approve-storage"}}}
	plainPatch := &capstan.PlanPatch{Approvals: []capstan.ApprovalRule{{Rule: "prod-second-person"}}}
	for _, tc := range []struct {
		name          string
		actor         string
		approve, prod bool
		p             *capstan.PlanPatch
		wantForbidden bool
	}{
		{"the starter approving a gate patch in prod", "alice", true, true, gatePatch, true},
		{"the starter rejecting it", "alice", false, true, gatePatch, false},
		{"another person approving it", "bob", true, true, gatePatch, false},
		{"the starter outside prod", "alice", true, false, gatePatch, false},
		{"the starter approving a patch that touches no gate", "alice", true, true, plainPatch, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := service.StarterMayApprovePatch("alice", tc.actor, tc.approve, tc.prod, tc.p)
			require.Equal(t, tc.wantForbidden, capstan.ErrorCode(err) == capstan.EFORBIDDEN, "%v", err)
		})
	}
}
