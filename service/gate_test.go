package service_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/service"
)

func TestGateDecider(t *testing.T) {
	spec := capstan.GateSpec{Type: "approval", RequiredRoles: []string{capstan.RoleSRE, "dba"}, Approvals: 2}
	waiting := capstan.Gate{NodeID: "approve", Status: "waiting", Spec: spec}
	decided := waiting
	decided.Decisions = []capstan.GateDecision{{Actor: "bob", Role: capstan.RoleSRE, Approve: true}}
	closed := waiting
	closed.Status = "approved"
	for _, c := range []struct {
		name     string
		gate     capstan.Gate
		actor    *capstan.Actor
		wantRole string
		wantCode string
	}{
		{"first required role held", waiting, &capstan.Actor{ID: "bob", Roles: []string{capstan.RoleSRE}}, capstan.RoleSRE, ""},
		{"another required role", waiting, &capstan.Actor{ID: "dan", Roles: []string{capstan.RoleViewer, "dba"}}, "dba", ""},
		{"an admin holds every role", waiting, &capstan.Actor{ID: "ann", Roles: []string{capstan.RoleAdmin}}, capstan.RoleSRE, ""},
		{"no required role", waiting, &capstan.Actor{ID: "vic", Roles: []string{capstan.RoleViewer}}, "", capstan.EFORBIDDEN},
		{"second decision of one actor", decided, &capstan.Actor{ID: "bob", Roles: []string{capstan.RoleSRE}}, "", capstan.ECONFLICT},
		{"another actor after a decision", decided, &capstan.Actor{ID: "carol", Roles: []string{capstan.RoleSRE}}, capstan.RoleSRE, ""},
		{"gate no longer waits", closed, &capstan.Actor{ID: "bob", Roles: []string{capstan.RoleSRE}}, "", capstan.ECONFLICT},
	} {
		t.Run(c.name, func(t *testing.T) {
			role, err := service.GateDecider(c.gate, c.actor)
			require.Equal(t, c.wantCode, capstan.ErrorCode(err))
			require.Equal(t, c.wantRole, role)
		})
	}
}

func TestGateOutcome(t *testing.T) {
	approve := func(actor string) capstan.GateDecision { return capstan.GateDecision{Actor: actor, Approve: true} }
	reject := func(actor string) capstan.GateDecision { return capstan.GateDecision{Actor: actor} }
	for _, c := range []struct {
		name      string
		approvals int
		decisions []capstan.GateDecision
		prod      bool
		want      string
	}{
		{"no decision yet", 1, nil, false, ""},
		{"one approval of one needed", 1, []capstan.GateDecision{approve("bob")}, false, "approved"},
		{"zero configured means one", 0, []capstan.GateDecision{approve("bob")}, false, "approved"},
		{"one approval of two needed", 2, []capstan.GateDecision{approve("bob")}, false, ""},
		{"two approvals of two", 2, []capstan.GateDecision{approve("bob"), approve("carol")}, false, "approved"},
		{"any rejection rejects", 2, []capstan.GateDecision{approve("bob"), reject("carol")}, false, "rejected"},
		{"the starter alone, not prod", 1, []capstan.GateDecision{approve("alice")}, false, "approved"},
		{"the starter alone, prod", 1, []capstan.GateDecision{approve("alice")}, true, ""},
		{"the starter and another, prod", 1, []capstan.GateDecision{approve("alice"), approve("bob")}, true, "approved"},
		{"the starter rejects, prod", 1, []capstan.GateDecision{reject("alice")}, true, "rejected"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := capstan.Gate{Status: "waiting", Spec: capstan.GateSpec{Approvals: c.approvals}, Decisions: c.decisions}
			require.Equal(t, c.want, service.GateOutcome(g, "alice", c.prod))
		})
	}
}

func TestStarterMayDecide(t *testing.T) {
	for _, c := range []struct {
		actor         string
		approve, prod bool
		code          string
	}{
		{"alice", true, true, capstan.EFORBIDDEN}, // the starter approving in prod
		{"alice", false, true, ""},                // the starter may stop it
		{"alice", true, false, ""},                // outside prod the starter may approve
		{"bob", true, true, ""},
	} {
		if got := capstan.ErrorCode(service.StarterMayDecide("alice", c.actor, c.approve, c.prod)); got != c.code {
			t.Errorf("StarterMayDecide(alice, %s, approve %v, prod %v) = %q, want %q", c.actor, c.approve, c.prod, got, c.code)
		}
	}
}
