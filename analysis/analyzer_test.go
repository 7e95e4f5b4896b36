package analysis_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
)

func TestDiagnose(t *testing.T) {
	failedRun := capstan.OperationNodeRun{NodeID: "deploy", Status: capstan.NodeFailed, Error: "connection refused"}
	for _, tc := range []struct {
		name      string
		in        analysis.Input
		kind      capstan.AnalysisKind
		diagnosis string
		patch     []capstan.PlanChange
	}{
		{name: "nothing wrong", in: analysis.Input{Node: "ask", Runs: []capstan.OperationNodeRun{{NodeID: "deploy", Status: capstan.NodeSucceeded}}},
			kind: capstan.AnalysisReview, diagnosis: "no failure recorded in this operation"},
		{name: "a transient failure proposes a retry", in: analysis.Input{Node: "ask", Runs: []capstan.OperationNodeRun{failedRun}},
			kind: capstan.AnalysisPatch, diagnosis: "node deploy failed: connection refused",
			patch: []capstan.PlanChange{{Op: "retry", Node: "deploy", Reason: "the failure looks transient (connection refused)"}}},
		{name: "a lasting failure recommends a fix", in: analysis.Input{Node: "ask", Runs: []capstan.OperationNodeRun{{NodeID: "deploy", Status: capstan.NodeWaitingIntervention, Error: "exit status 2"}}},
			kind: capstan.AnalysisRecommendation, diagnosis: "node deploy waiting_intervention: exit status 2"},
		{name: "the analysis node's own runs are not findings", in: analysis.Input{Node: "ask", Runs: []capstan.OperationNodeRun{{NodeID: "ask", Status: capstan.NodeRetrying, Error: "timeout"}}},
			kind: capstan.AnalysisReview, diagnosis: "no failure recorded in this operation"},
		{name: "error lines of an input artifact", in: analysis.Input{Node: "ask", Artifacts: []analysis.Artifact{{
			Artifact: capstan.Artifact{Name: "diagnostics", ProducedBy: "collect", StorageRef: "file:/d.log#0-40"},
			Content:  []byte("pods ok\nERROR etcd-0: quorum lost\nall fine\n")}}},
			kind: capstan.AnalysisDiagnosis, diagnosis: "artifact diagnostics: ERROR etcd-0: quorum lost"},
		{name: "failed evidence and an unhealthy resource", in: analysis.Input{Node: "ask",
			Evidence: []capstan.Evidence{{ProducedBy: "check", Item: "ready", Result: capstan.EvidenceFailed}},
			Resource: &capstan.Resource{Type: "tempo", Name: "t1", HealthStatus: capstan.HealthDegraded, LifecycleStatus: capstan.LifecycleActive}},
			kind: capstan.AnalysisDiagnosis, diagnosis: "evidence: ready failed; resource tempo/t1: health degraded, lifecycle active"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := analysis.Diagnose(tc.in)
			require.Equal(t, tc.kind, a.Kind)
			require.Equal(t, tc.diagnosis, a.Diagnosis)
			require.Equal(t, tc.patch, a.ProposedPatch)
			require.NoError(t, a.Check(func(id string) bool { return id == "deploy" }), "the built-in analyzer's output is always structured")
		})
	}
}
