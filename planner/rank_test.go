package planner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/planner"
)

func TestRank(t *testing.T) {
	res := func(ref string, accepted bool, via ...string) capstan.CandidateVerdict {
		return capstan.CandidateVerdict{Kind: capstan.CandidateResource, Ref: ref, Accepted: accepted, Via: via, Reason: "rejected: x"}
	}
	scn := func(ref string) capstan.CandidateVerdict {
		return capstan.CandidateVerdict{Kind: capstan.CandidateScenario, Ref: ref, Accepted: true}
	}
	tests := []struct {
		name     string
		in       []capstan.CandidateVerdict
		selected int
		ranks    []int
		reasons  []string
	}{
		{"none accepted", []capstan.CandidateVerdict{res("a", false)}, -1, []int{0}, []string{"rejected: x"}},
		{"by key", []capstan.CandidateVerdict{res("b", true), res("a", true)}, 1, []int{2, 1},
			[]string{"accepted but ranked below a (equal fit; ties break by key)", "selected: meets every constraint and policy and ranks first"}},
		{"direct before implied", []capstan.CandidateVerdict{res("a", true, "x", "y"), res("z", true)}, 1, []int{2, 1},
			[]string{"accepted but ranked below z (a direct provider is preferred to an implied one)", "selected: meets every constraint and policy and ranks first"}},
		{"existing before creating", []capstan.CandidateVerdict{scn("a.install@1.0.0"), res("z", true), res("q", false)}, 1, []int{2, 1, 0},
			[]string{"accepted but ranked below z (an existing provider is preferred to creating one)", "selected: meets every constraint and policy and ranks first", "rejected: x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := planner.Rank(tt.in)
			require.Equal(t, tt.selected, got)
			for i, v := range tt.in {
				require.Equal(t, tt.ranks[i], v.Rank, "rank of %s", v.Ref)
				require.Equal(t, tt.reasons[i], v.Reason)
				require.Equal(t, i == tt.selected, v.Selected)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	p := &capstan.Plan{Status: capstan.PlanReady, Nodes: []capstan.PlanNode{
		{ID: "s", Type: capstan.NodeStage}, {ID: "j", Type: capstan.NodeJob},
		{ID: "g", Type: capstan.NodeGate, Gate: &capstan.GateSpec{RequiredRoles: []string{"sre"}}},
	}, Bindings: []capstan.ResourceBinding{
		{ID: "a", Status: capstan.BindingResolved, Provider: &capstan.BoundProvider{ResourceKey: "x/y"}},
		{ID: "b", Status: capstan.BindingPendingSubOperation, SubOperation: &capstan.SubOperationBinding{Scenario: "m@1.0.0"}},
		{ID: "b/c", Parent: "b", Status: capstan.BindingResolved, Provider: &capstan.BoundProvider{ResourceKey: "x/z"}},
	}}
	s := planner.Summarize(p)
	require.Equal(t, 2, s.Steps)
	require.Equal(t, "ready to start", s.CurrentPhase)
	require.Equal(t, []string{"a: use x/y", "b: create with m@1.0.0"}, s.Bindings)
	require.Equal(t, []string{"gate g will need approval from [sre]"}, s.NeedsAttention)
	vs, es := planner.CapabilityGraph(p)
	require.Len(t, vs, 7)
	require.Len(t, es, 6)
}
