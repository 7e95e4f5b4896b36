package executor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
	"github.com/capstan-dev/capstan/artifact"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/service"
)

const analysisPack = `id: analysischeck
version: 1.0.0
capabilities:
  - {key: analysed.cap, category: test}
scenarios:
  - id: analysed.repair
    action: repair
    target_resource_type: analysed
    plan:
      nodes:
        - id: collect
          type: job
          title: Collect diagnostics
          job:
            run: {runner: shell, script: 'echo "pods: 3/3 running"; echo "ERROR ingester-1: disk full"'}
            outputs:
              artifacts: [{name: diagnostics, type: diagnostics.bundle, sensitivity: internal}]
              evidence: [{name: collected, type: command, script: 'true'}]
        - id: diagnose
          type: ai_analysis
          title: Diagnose
          after: [collect]
          analysis: {question: "What is broken?", inputs: [diagnostics], output: diagnosis}
        - id: after-diagnosis
          type: job
          title: Runs only after an accepted analysis
          after: [diagnose]
          job:
            run: {runner: sim}
            outputs:
              evidence: [{name: done, type: sim}]
`

func startAnalysis(t *testing.T, svc *service.Service) *capstan.Operation {
	return startAnalysisOf(t, svc, analysisPack, "analysed")
}

// startAnalysisOf installs a pack and starts its repair of target.
func startAnalysisOf(t *testing.T, svc *service.Service, pack, target string) *capstan.Operation {
	admin := as("alice", capstan.RoleAdmin)
	_, err := svc.InstallPackYAML(admin, "analysis.yaml", []byte(pack))
	require.NoError(t, err)
	in, err := svc.CreateIntent(admin, service.IntentInput{Action: "repair", TargetResourceType: target, Constraints: map[string]any{"environment": "dev"}})
	require.NoError(t, err)
	plan, err := svc.PlanIntent(admin, in.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanReady, plan.Status, "%v", plan.Problems)
	op, err := svc.StartOperation(admin, plan.ID, "")
	require.NoError(t, err)
	return op
}

// TestAnalysisNodeRecordsStructuredOutput runs the built-in analyzer on a
// job's diagnostics: its diagnosis points at the log line it read.
func TestAnalysisNodeRecordsStructuredOutput(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, _ := setup(t, store, org)
		op := startAnalysis(t, svc)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationSucceeded, op.Status)
		a := analysisOf(t, store, op.ID, capstan.EvidencePassed)
		require.Equal(t, capstan.AnalysisDiagnosis, a.Kind)
		require.Equal(t, analysis.DeterministicName, a.Analyzer)
		require.Contains(t, a.Diagnosis, "ERROR ingester-1: disk full")
		require.Len(t, a.Findings, 1)
		require.Equal(t, "collect", a.Findings[0].Node)
		content, err := artifact.Read(context.Background(), artifact.Dir{Root: executorDirs[store]}, capstan.Artifact{Name: "finding", StorageRef: a.Findings[0].Ref}, 0)
		require.NoError(t, err)
		require.Contains(t, string(content), "disk full", "the finding refers to the artifact it came from")
	})
}

// scriptedAnalyzer answers each call with the next scripted answer.
type scriptedAnalyzer struct {
	calls   atomic.Int32
	answers []func() (capstan.Analysis, error)
}

func (s *scriptedAnalyzer) Analyze(context.Context, analysis.Input) (capstan.Analysis, error) {
	i := int(s.calls.Add(1)) - 1
	return s.answers[min(i, len(s.answers)-1)]()
}

// TestAnalysisOutputMustBeStructured plugs in an analyzer that fails and
// then answers in free text: neither is accepted (invariant 9), the node
// is retried by the analysis policy and then asks for attention, and the
// node after it never runs.
func TestAnalysisOutputMustBeStructured(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		analyzer := &scriptedAnalyzer{answers: []func() (capstan.Analysis, error){
			func() (capstan.Analysis, error) { return capstan.Analysis{}, errors.New("model unavailable") },
			func() (capstan.Analysis, error) {
				return capstan.Analysis{Analyzer: "ai-agent:chatty", Diagnosis: "just delete the namespace, trust me"}, nil
			},
			func() (capstan.Analysis, error) {
				return capstan.Analysis{Analyzer: "ai-agent:chatty", Kind: capstan.AnalysisPatch, Diagnosis: "d", Recommendation: "r",
					ProposedPatch: []capstan.PlanChange{{Op: "remove", Node: "no-such-node", Reason: "r"}}}, nil
			},
		}}
		svc, _ := setup(t, store, org, func(c *executor.Config) { c.Analyzer = analyzer })
		op := startAnalysis(t, svc)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })
		require.EqualValues(t, 3, analyzer.calls.Load())
		runs := nodeRuns(t, store, op.ID)
		require.Equal(t, capstan.NodeFailed, runs["diagnose"].Status)
		require.Equal(t, 3, runs["diagnose"].Attempts)
		require.NotContains(t, runs, "after-diagnosis", "nothing runs on a rejected analysis")
		recs, err := store.OperationRecords(context.Background(), org, op.ID)
		require.NoError(t, err)
		var rejected []string
		for _, e := range recs.Evidence {
			if e.ProducedBy == "diagnose" {
				require.Equal(t, capstan.EvidenceFailed, e.Result)
				rejected = append(rejected, e.Source["rejected"].(string))
			}
		}
		require.Len(t, rejected, 2)
		require.Contains(t, rejected[0], "kind \"\" is not one of")
		require.Contains(t, rejected[1], "the plan has no node \"no-such-node\"")
		require.Contains(t, timeline(t, store, op.ID), "operation.needs_attention")
	})
}

// analysisOf returns the analysis recorded as evidence with result want.
func analysisOf(t *testing.T, store capstan.Store, opID string, want string) capstan.Analysis {
	t.Helper()
	recs, err := store.OperationRecords(context.Background(), org, opID)
	require.NoError(t, err)
	for _, e := range recs.Evidence {
		if a, ok := capstan.AnalysisOf(e); ok && e.Result == want {
			return a
		}
	}
	t.Fatalf("no %s analysis evidence in %+v", want, recs.Evidence)
	return capstan.Analysis{}
}

// TestAnalysisNodeProposalIsJudged: an ai_analysis node's accepted patch
// analysis is handed to the service as a proposal by its analyzer; one the
// validator refuses (here a retry of a node that succeeded) is recorded in
// the timeline and changes nothing.
func TestAnalysisNodeProposalIsJudged(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		analyzer := &scriptedAnalyzer{answers: []func() (capstan.Analysis, error){func() (capstan.Analysis, error) {
			return capstan.Analysis{Analyzer: "ai-agent:scripted", Kind: capstan.AnalysisPatch, Diagnosis: "collect looked wrong", Recommendation: "run it again",
				ProposedPatch: []capstan.PlanChange{{Op: capstan.ChangeRetry, Node: "collect", Reason: "again"}}}, nil
		}}}
		svc, _ := setup(t, store, org, func(c *executor.Config) { c.Analyzer = analyzer })
		// The analysis pack with a gate after the analysis: the operation
		// waits there while the proposal is judged.
		gated := strings.Replace(analysisPack, "id: analysischeck", "id: analysisgate", 1)
		gated = strings.Replace(gated, "target_resource_type: analysed", "target_resource_type: analysed.gated", 1)
		gated = strings.Replace(gated, "id: analysed.repair", "id: analysed.gated.repair", 1)
		gated = strings.Replace(gated, "capabilities:\n  - {key: analysed.cap, category: test}\n", "", 1)
		gated = strings.Replace(gated, "          after: [diagnose]\n", "          after: [hold]\n", 1)
		gated = strings.Replace(gated, "output: diagnosis}\n", "output: diagnosis}\n        - {id: hold, type: gate, title: Hold, after: [diagnose], gate: {type: approval, reason: r, required_roles: [sre]}}\n", 1)
		op := startAnalysisOf(t, svc, gated, "analysed.gated")
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })
		deadline := time.Now().Add(10 * time.Second)
		for !slices.Contains(timeline(t, store, op.ID), "analysis.proposal_refused") {
			require.True(t, time.Now().Before(deadline), "the refused proposal is recorded: %v", timeline(t, store, op.ID))
			time.Sleep(10 * time.Millisecond)
		}
		patches, err := store.ListPlanPatches(context.Background(), org, op.ID)
		require.NoError(t, err)
		require.Empty(t, patches, "a refused proposal leaves no patch")
	})
}

// assistedPack's job fails and allows AI assistance: its failure is
// analyzed by itself.
const assistedPack = `id: assisted
version: 1.0.0
scenarios:
  - id: assisted.repair
    action: repair
    target_resource_type: assisted
    plan:
      nodes:
        - id: flaky
          type: job
          title: Fails
          job:
            run: {runner: sim, outcomes: [fail]}
            outputs:
              evidence: [{name: done, type: sim}]
            controls: {ai_assistance_allowed: true, retry: {maximum_attempts: 1, on_exhausted: wait}}
`

// TestARefusedAnalysisIsOnTheTimeline: when the analysis of a failed
// job gives nothing — the model server rate limits, refuses or is down —
// the operation's timeline says so (analysis.failed, by the analyzer,
// with the error's code), not only the server's log.
func TestARefusedAnalysisIsOnTheTimeline(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		analyzer := &scriptedAnalyzer{answers: []func() (capstan.Analysis, error){func() (capstan.Analysis, error) {
			return capstan.Analysis{}, capstan.Errorf(capstan.ERATELIMITED, "the analyzer's daily token budget of this organization is spent")
		}}}
		svc, _ := setup(t, store, org, func(c *executor.Config) { c.Analyzer = analyzer; c.SkipRules = true })
		op := startAnalysisOf(t, svc, assistedPack, "assisted")
		deadline := time.Now().Add(10 * time.Second)
		for !slices.Contains(timeline(t, store, op.ID), "analysis.failed") {
			require.True(t, time.Now().Before(deadline), "the failed analysis is recorded: %v", timeline(t, store, op.ID))
			time.Sleep(10 * time.Millisecond)
		}
		evs, err := store.ListEvents(context.Background(), org, op.ID, 0, 1000)
		require.NoError(t, err)
		for _, e := range evs {
			if e.Type == "analysis.failed" {
				require.Equal(t, "flaky", e.Payload["node"])
				require.Contains(t, fmt.Sprint(e.Payload["problems"]), "RATE_LIMITED: the analyzer's daily token budget")
			}
		}
	})
}
