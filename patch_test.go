package capstan_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func revPlan() *capstan.Plan {
	return &capstan.Plan{Meta: capstan.Meta{ID: "p"}, ScenarioRef: "s@1.0.0", Revision: 1,
		Nodes: []capstan.PlanNode{{ID: "a", Type: capstan.NodeJob, Title: "A", Parameters: map[string]any{"x": 1.0}},
			{ID: "g", Type: capstan.NodeGate, Title: "G", Gate: &capstan.GateSpec{RequiredRoles: []string{"sre"}}},
			{ID: "b", Type: capstan.NodeJob, Title: "B"}},
		Edges: []capstan.Edge{{From: "a", To: "g"}, {From: "g", To: "b"}}}
}

func TestRevisionWrite(t *testing.T) {
	first := revPlan()
	first.Digest = capstan.ContentOf(first).Digest()
	next := revPlan()
	next.Revision = 2
	next.Nodes[0].Parameters = map[string]any{"x": 2.0}
	next.Digest = capstan.ContentOf(next).Digest()
	skipped := *next
	skipped.Revision = 3
	lying := *next
	lying.Digest = first.Digest
	for _, c := range []struct {
		name     string
		stored   *capstan.Plan
		p        *capstan.Plan
		existing *capstan.PlanRevision
		snap     bool
		parent   string
		err      string
	}{
		{"a new plan", nil, first, nil, true, "", ""},
		{"a new plan not at revision 1", nil, next, nil, false, "", "starts at revision 1"},
		{"the next revision", first, next, nil, true, first.Digest, ""},
		{"a skipped revision", first, &skipped, nil, false, "", "the next is 2, not 3"},
		{"a digest that is not the content's", first, &lying, nil, false, "", "carries digest"},
		{"a runtime write at a stored revision", first, first, &capstan.PlanRevision{Digest: first.Digest}, false, "", ""},
		{"a changed revision", first, next, &capstan.PlanRevision{Digest: first.Digest}, false, "", "never changes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap, data, err := capstan.RevisionWrite(c.stored, c.p, c.existing)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.snap, snap != nil)
			if snap != nil {
				require.Equal(t, c.parent, snap.Parent)
				require.Equal(t, capstan.ContentOf(c.p).Digest(), snap.Digest)
				var back capstan.PlanRevision
				require.NoError(t, json.Unmarshal(data, &back))
				require.Equal(t, snap.Digest, back.Digest)
				require.Equal(t, capstan.ContentOf(c.p).Digest(), back.RevisionContent.Digest(), "the stored JSON holds the content it digests")
			}
		})
	}
}

func TestDiffAndUpstreamDigest(t *testing.T) {
	a := revPlan()
	b := revPlan()
	b.Revision = 2
	b.Nodes[0].Parameters = map[string]any{"x": 2.0, "y": "new"}
	b.Nodes = append(b.Nodes, capstan.PlanNode{ID: "c", Type: capstan.NodeJob, Title: "C"})
	b.Edges = append(b.Edges, capstan.Edge{From: "b", To: "c"})
	ra, rb := capstan.Snapshot(a, ""), capstan.Snapshot(b, "")
	d := capstan.Diff(ra, rb)
	require.Equal(t, "c", d.NodesAdded[0].ID)
	require.Equal(t, []capstan.EntityDiff{{ID: "a", Fields: []capstan.FieldDiff{{Path: "parameters.x", Old: 1.0, New: 2.0}, {Path: "parameters.y", Old: nil, New: "new"}}}}, d.NodesChanged)
	require.Equal(t, []capstan.Edge{{From: "b", To: "c"}}, d.EdgesAdded)
	require.Empty(t, d.Gates, "the gate itself did not change")
	require.True(t, capstan.Diff(ra, ra).Empty())
	// The gate's approvers saw a; changing a changes what they saw, adding c after b does not.
	require.NotEqual(t, capstan.UpstreamDigest(a, "g"), capstan.UpstreamDigest(b, "g"))
	c := revPlan()
	c.Nodes = append(c.Nodes, capstan.PlanNode{ID: "z", Type: capstan.NodeJob, Title: "Z"})
	c.Edges = append(c.Edges, capstan.Edge{From: "b", To: "z"})
	require.Equal(t, capstan.UpstreamDigest(a, "g"), capstan.UpstreamDigest(c, "g"))
}

func TestPatchApprovals(t *testing.T) {
	changes := []capstan.PlanChange{{Op: capstan.ChangeRetry, Node: "a"}}
	stamped := []capstan.PlanChange{{Op: capstan.ChangeRetry, Node: "a", Actor: "x", At: time.Now(), Revision: 2}}
	require.Equal(t, capstan.PatchDigest("sha256:base", changes), capstan.PatchDigest("sha256:base", stamped), "stamps are not what was proposed")
	require.NotEqual(t, capstan.PatchDigest("sha256:base", changes), capstan.PatchDigest("sha256:other", changes))

	rules := capstan.DefaultApprovalRules(true, "ai-agent:rules", []capstan.GateTouch{{Node: "g", Spec: capstan.GateSpec{RequiredRoles: []string{"dba"}, Approvals: 2}}})
	var names []string
	for _, r := range rules {
		names = append(names, r.Rule)
	}
	require.Equal(t, []string{"prod-second-person", "agent-needs-person", "gate:g"}, names)
	require.Empty(t, capstan.DefaultApprovalRules(false, "alice", nil), "nothing asks outside prod for a person's patch that touches no gate")

	p := &capstan.PlanPatch{Meta: capstan.Meta{ID: "x"}, Author: "ai-agent:rules", Status: capstan.PatchProposed, Digest: "d", Approvals: rules}
	require.Equal(t, map[string]int{"prod-second-person": 2, "agent-needs-person": 1, "gate:g": 2}, p.Outstanding(), "in prod an analyzer's patch needs two people")
	p.Decisions = []capstan.PatchDecision{{Actor: "dora", Roles: []string{"dba", "sre"}, Approve: true, Digest: "d"},
		{Actor: "old", Roles: []string{"dba"}, Approve: true, Digest: "stale-digest"}}
	require.Equal(t, map[string]int{"prod-second-person": 1, "gate:g": 1}, p.Outstanding(), "one decision counts for every rule its roles meet; one on another digest for none; the starter alone is not a second person")
	p.Decisions = append(p.Decisions, capstan.PatchDecision{Actor: "dan", Roles: []string{"dba"}, Approve: true, Digest: "d"})
	require.Equal(t, map[string]int{"prod-second-person": 1}, p.Outstanding(), "dan holds no approver role")
	p.Decisions = append(p.Decisions, capstan.PatchDecision{Actor: "sam", Roles: []string{"sre"}, Approve: true, Digest: "d"})
	require.True(t, p.Approved())
	require.Equal(t, 1, capstan.DefaultApprovalRules(true, "alice", nil)[0].Approvals, "a person's patch in prod needs one other person")

	for _, c := range []struct {
		name  string
		actor *capstan.Actor
		seen  string
		code  string
	}{
		{"a person with a role a rule asks for", &capstan.Actor{ID: "erin", Roles: []string{"dba"}}, "d", ""},
		{"the analyzer that proposed", &capstan.Actor{ID: "ai-agent:rules", Roles: []string{capstan.RoleAdmin}}, "d", capstan.EFORBIDDEN},
		{"another analyzer", &capstan.Actor{ID: "ai-agent:other", Roles: []string{capstan.RoleAdmin}}, "d", capstan.EFORBIDDEN},
		{"a viewer", &capstan.Actor{ID: "vic", Roles: []string{capstan.RoleViewer}}, "d", capstan.EFORBIDDEN},
		{"one who decided already", &capstan.Actor{ID: "dora", Roles: []string{"dba"}}, "d", capstan.ECONFLICT},
		{"a decision on another digest", &capstan.Actor{ID: "erin", Roles: []string{"dba"}}, "other", capstan.ECONFLICT},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.code, capstan.ErrorCode(p.CheckDecider(c.actor, c.seen)))
		})
	}
	person := &capstan.PlanPatch{Author: "alice", Status: capstan.PatchProposed}
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(person.CheckDecider(&capstan.Actor{ID: "alice", Roles: []string{capstan.RoleAdmin}}, "")), "the proposer never decides")
}

func TestLegacyPlanChangesStillRead(t *testing.T) {
	var cs []capstan.PlanChange
	require.NoError(t, json.Unmarshal([]byte(`[
	  {"op":"add_node","node":{"id":"smoke","type":"verification","title":"Smoke"},"actor":"alice","revision":2},
	  {"op":"remove_node","node_id":"approve"},
	  {"op":"set_parameters","node_id":"helm","parameters":{"r":3}},
	  {"op":"override_binding","binding_id":"secrets","provider":"vault.instance/v"},
	  {"op":"insert_after","node":"a","template":"t"}]`), &cs))
	require.Equal(t, capstan.ChangeInsertAfter, cs[0].Op)
	require.Equal(t, "smoke", cs[0].Spec.ID)
	require.Equal(t, "smoke", cs[0].NodeID)
	require.Equal(t, "alice", cs[0].Actor)
	require.Equal(t, capstan.PlanChange{Op: capstan.ChangeRemove, Node: "approve"}, cs[1])
	require.Equal(t, "helm", cs[2].Node)
	require.Equal(t, capstan.PlanChange{Op: capstan.ChangeRebind, Requirement: "secrets", Provider: "vault.instance/v"}, cs[3])
	require.Equal(t, capstan.PlanChange{Op: capstan.ChangeInsertAfter, Node: "a", Template: "t"}, cs[4])
}
