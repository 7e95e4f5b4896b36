package capstan_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestAnalysisCheck(t *testing.T) {
	ok := capstan.Analysis{Analyzer: "ai-agent:x", Kind: capstan.AnalysisPatch, Diagnosis: "d", Recommendation: "r",
		ProposedPatch: []capstan.PlanChange{{Op: "retry", Node: "deploy", Reason: "transient"}}}
	with := func(f func(*capstan.Analysis)) capstan.Analysis {
		a := ok
		a.ProposedPatch = append([]capstan.PlanChange(nil), ok.ProposedPatch...)
		f(&a)
		return a
	}
	for _, tc := range []struct {
		name string
		a    capstan.Analysis
		want string // "" when accepted
	}{
		{"a structured patch", ok, ""},
		{"a review", capstan.Analysis{Analyzer: "x", Kind: capstan.AnalysisReview, Diagnosis: "fine", Recommendation: "continue"}, ""},
		{"free text only", capstan.Analysis{Analyzer: "x", Diagnosis: "delete it all"}, `kind "" is not one of`},
		{"no analyzer", with(func(a *capstan.Analysis) { a.Analyzer = "" }), "the analyzer is not named"},
		{"no diagnosis", with(func(a *capstan.Analysis) { a.Diagnosis = " " }), "no diagnosis"},
		{"no recommendation", with(func(a *capstan.Analysis) { a.Recommendation = "" }), "no recommendation"},
		{"a patch without changes", with(func(a *capstan.Analysis) { a.ProposedPatch = nil }), "proposes no change"},
		{"changes outside a patch", with(func(a *capstan.Analysis) { a.Kind = capstan.AnalysisDiagnosis }), "only a patch analysis may propose changes"},
		{"an unknown op", with(func(a *capstan.Analysis) { a.ProposedPatch[0].Op = "rm -rf" }), `op "rm -rf" is not a PlanPatch op`},
		{"an unknown node", with(func(a *capstan.Analysis) { a.ProposedPatch[0].Node = "ghost" }), `the plan has no node "ghost"`},
		{"a change without reason", with(func(a *capstan.Analysis) { a.ProposedPatch[0].Reason = "" }), "change 1: no reason"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.a.Check(func(id string) bool { return id == "deploy" })
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
			require.Contains(t, capstan.ErrorMessage(err), tc.want)
		})
	}
}

func TestAnalysisRoundTripsThroughEvidence(t *testing.T) {
	a := capstan.Analysis{Analyzer: "deterministic", Kind: capstan.AnalysisDiagnosis, Diagnosis: "d", Recommendation: "r",
		Findings: []capstan.AnalysisFinding{{Node: "n", Source: "evidence", Detail: "x failed"}}}
	got, ok := capstan.AnalysisOf(capstan.Evidence{Source: a.Source("why?")})
	require.True(t, ok)
	require.Equal(t, a, got)
	_, ok = capstan.AnalysisOf(capstan.Evidence{Source: map[string]any{"type": "command"}})
	require.False(t, ok)
}
