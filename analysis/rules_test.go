package analysis_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
)

func TestMatchRules(t *testing.T) {
	rule := capstan.FailureRule{ID: "registry-unreachable", Node: "init", Evidence: "registry-reachable", Pack: "kubernetes@1.5.0",
		Diagnosis: "no registry", MissingCapability: "network.registry_access",
		Patch: []capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: "containerd", Template: "configure-registry-mirror"}, {Op: capstan.ChangeRetry, Node: "init"}}}
	byError := capstan.FailureRule{ID: "oom", Node: "init", Error: "(?i)out of memory", Diagnosis: "too small"}
	failed := []capstan.OperationNodeRun{{NodeID: "init", Status: capstan.NodeFailed, Error: "evidence registry-reachable failed"}}
	evidence := []capstan.Evidence{{Meta: capstan.Meta{ID: "e1"}, ProducedBy: "init", Item: "registry-reachable", Result: capstan.EvidenceFailed,
		Source: map[string]any{"type": "capability", "resource": "compute.node/worker-3"}}}
	for _, c := range []struct {
		name     string
		rules    []capstan.FailureRule
		runs     []capstan.OperationNodeRun
		evidence []capstan.Evidence
		want     string // the rule matched, "" for none
	}{
		{"the failed evidence item", []capstan.FailureRule{rule}, failed, evidence, "registry-unreachable"},
		{"another node's rule", []capstan.FailureRule{{ID: "x", Node: "other", Evidence: "registry-reachable", Diagnosis: "d"}}, failed, evidence, ""},
		{"the item passed", []capstan.FailureRule{rule}, failed, []capstan.Evidence{{ProducedBy: "init", Item: "registry-reachable", Result: capstan.EvidencePassed}}, ""},
		{"an error pattern", []capstan.FailureRule{byError}, []capstan.OperationNodeRun{{NodeID: "init", Status: capstan.NodeFailed, Error: "kubelet: Out of memory"}}, nil, "oom"},
		{"the first matching rule", []capstan.FailureRule{byError, rule}, failed, evidence, "registry-unreachable"},
		{"a node that never ran", []capstan.FailureRule{rule}, nil, evidence, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, ok := analysis.MatchRules(c.rules, "init", c.runs, c.evidence)
			require.Equal(t, c.want != "", ok)
			if !ok {
				return
			}
			require.Contains(t, a.Recommendation+a.Diagnosis, map[string]string{"registry-unreachable": "no registry", "oom": "too small"}[c.want])
			require.NoError(t, a.Check(func(string) bool { return true }))
		})
	}
	a, _ := analysis.MatchRules([]capstan.FailureRule{rule}, "init", failed, evidence)
	require.Equal(t, analysis.RuleAnalyzerName, a.Analyzer)
	require.Equal(t, capstan.AnalysisPatch, a.Kind)
	require.Equal(t, []string{"network.registry_access on compute.node/worker-3"}, a.Missing)
	require.Len(t, a.ProposedPatch, 2)
	require.Equal(t, "e1", a.Findings[0].Ref, "the finding cites the evidence")
}

func TestARuleFillsItsPatchWithWhatTheErrorSays(t *testing.T) {
	rule := capstan.FailureRule{ID: "image-pull", Node: "apply", Error: `on (?P<node>[a-z0-9.-]+): ErrImagePull`, Pack: "kubernetes@1.5.0",
		Diagnosis: "node ${match.node} cannot pull", MissingCapability: "network.registry_access",
		Patch: []capstan.PlanChange{{Op: capstan.ChangeSetParameters, Node: "apply", Parameters: map[string]any{"avoid_node": "${match.node}", "replicas": 3}, Reason: "keep off ${match.node}"},
			{Op: capstan.ChangeRetry, Node: "apply"}}}
	runs := []capstan.OperationNodeRun{{NodeID: "apply", Status: capstan.NodeFailed,
		Error: "Deployment web was not ready; pod web-1 on worker-3: ErrImagePull: registry.internal unreachable; pod web-2 on worker-1: ContainerCreating"}}
	a, ok := analysis.MatchRules([]capstan.FailureRule{rule}, "apply", runs, nil)
	require.True(t, ok)
	require.Equal(t, "node worker-3 cannot pull", a.Diagnosis)
	require.Equal(t, map[string]any{"avoid_node": "worker-3", "replicas": 3}, a.ProposedPatch[0].Parameters)
	require.Equal(t, "keep off worker-3", a.ProposedPatch[0].Reason)
	require.Equal(t, "${match.node}", rule.Patch[0].Parameters["avoid_node"], "the pack's rule is left as written")

	bad := rule
	bad.Diagnosis = "node ${match.host} cannot pull"
	require.ErrorContains(t, bad.Validate(), "${match.host} names no group of the error pattern")
	require.NoError(t, rule.Validate())
}
