package modelanalyzer_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
	"github.com/capstan-dev/capstan/modelanalyzer"
	"github.com/capstan-dev/capstan/modelanalyzer/fakemodel"
	"github.com/capstan-dev/capstan/secret"
)

// planted is a secret value the records hold; it must never leave.
const planted = "PLANTED-s3cr3t-9f2c"

// seedInput is the seed's §8 story: pull-images failed on worker-3
// because the registry is not reachable from it.
func seedInput() analysis.Input {
	red := secret.NewRedactor([][]byte{[]byte(planted)})
	worker := &capstan.Resource{Type: "compute.node", Name: "worker-3", Environment: "prod", LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
		ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "linux.host", Scope: map[string]any{"ip": "10.0.3.7"}}},
		Relationships:        []capstan.Relationship{{Type: capstan.RelDependsOn, Target: "registry.mirror/mirror-1"}}}
	mirror := &capstan.Resource{Type: "registry.mirror", Name: "mirror-1", Environment: "prod", LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthDegraded}
	return analysis.Input{
		Org: "acme", OperationID: "op-1", Node: "diagnose", Question: "why did pull-images fail, and what would fix it?",
		Runs: []capstan.OperationNodeRun{
			{NodeID: "pull-images", Status: capstan.NodeFailed, Attempts: 3, Error: "ImagePullBackOff: registry.internal:5000 unreachable from 10.0.3.7 (token " + planted + ")"}},
		Evidence: []capstan.Evidence{{Meta: capstan.Meta{ID: "ev-pull"}, ProducedBy: "pull-images", Item: "images pulled", Result: capstan.EvidenceFailed}},
		Artifacts: []analysis.Artifact{{Artifact: capstan.Artifact{Name: "pull-log", ProducedBy: "pull-images"},
			Content: []byte("pulling tempo:2.4 on worker-3.prod.acme.internal\nerror: dial tcp 10.0.9.1:5000: i/o timeout\nauth " + planted + "\n")}},
		Plan: &capstan.Plan{Nodes: []capstan.PlanNode{{ID: "pull-images", Type: capstan.NodeJob}, {ID: "approve-prod", Type: capstan.NodeGate}, {ID: "deploy", Type: capstan.NodeJob}, {ID: "diagnose", Type: capstan.NodeAIAnalysis}},
			Edges: []capstan.Edge{{From: "pull-images", To: "approve-prod"}, {From: "approve-prod", To: "deploy"}}},
		Templates: []capstan.NodeTemplate{{Name: "open-registry-access", Description: "opens the registry port for a host", Parameters: []string{"host"}}},
		Resources: []*capstan.Resource{worker},
		Lookup:    lookup{"compute.node/worker-3": worker, "registry.mirror/mirror-1": mirror},
		Redact:    red.String,
	}
}

type lookup map[string]*capstan.Resource

func (l lookup) NodeOutput(_ context.Context, node string) (string, error) {
	return "last lines of " + node + ": auth " + planted + " refused by worker-3.prod.acme.internal", nil
}

func (l lookup) Resource(_ context.Context, key string) (*capstan.Resource, error) {
	if r := l[key]; r != nil {
		return r, nil
	}
	return nil, capstan.Errorf(capstan.ENOTFOUND, "no resource %s", key)
}

// analyze runs the analyzer against a fake server replaying a fixture.
func analyze(t *testing.T, fixture string, tweak ...func(*modelanalyzer.Config)) (capstan.Analysis, error, *fakemodel.Server) {
	t.Helper()
	f, err := fakemodel.Load(filepath.Join("testdata", "fixtures", fixture+".json"))
	require.NoError(t, err)
	srv := fakemodel.Start(f)
	t.Cleanup(srv.Close)
	cfg := modelanalyzer.Config{Endpoint: srv.URL + "/v1", Model: "fake-1", APIKey: "sk-test", Timeout: 2 * time.Second,
		Mask: []*regexp.Regexp{regexp.MustCompile(`[a-z0-9-]+\.prod\.acme\.internal`)}, PromptPrice: 1, CompletionPrice: 2}
	for _, fn := range tweak {
		fn(&cfg)
	}
	a, err := modelanalyzer.New(cfg)
	require.NoError(t, err)
	got, err := a.Analyze(context.Background(), seedInput())
	for _, body := range srv.Requests() { // whatever the fixture, no secret and no masked name leaves
		require.NotContains(t, body, planted)
		require.NotContains(t, body, "worker-3.prod.acme.internal")
		require.NotContains(t, body, "10.0.9.1")
	}
	return got, err, srv
}

func TestAGoodDiagnosisWithAPatch(t *testing.T) {
	a, err, srv := analyze(t, "good-patch")
	require.NoError(t, err)
	require.Equal(t, modelanalyzer.Name, a.Analyzer)
	require.Equal(t, capstan.AnalysisPatch, a.Kind)
	require.Len(t, a.Findings, 2)
	require.Zero(t, a.DroppedFindings)
	require.Equal(t, []string{"network.registry_access"}, a.Missing)
	require.Len(t, a.ProposedPatch, 2)
	require.Equal(t, capstan.PlanChange{Op: capstan.ChangeInsertBefore, Node: "pull-images", Template: "open-registry-access", NodeID: "open-registry-access",
		Parameters: map[string]any{"host": "worker-3"}, Reason: "worker-3 needs registry access before the pull"}, a.ProposedPatch[0])
	require.NoError(t, a.Check(func(id string) bool { return id == "pull-images" }))
	m := a.Model
	require.Equal(t, "fake-1", m.Name)
	require.Equal(t, int64(120), m.PromptTokens)
	require.Equal(t, int64(40), m.CompletionTokens)
	require.InDelta(t, (120*1+40*2)/1e6, m.Cost, 1e-12)
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, m.PromptDigest)
	// One request, strict schema, the tools offered.
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	require.Contains(t, reqs[0], `"strict":true`)
	require.Contains(t, reqs[0], `"json_schema"`)
	require.Contains(t, reqs[0], `"node_output"`)
	require.Contains(t, reqs[0], "MASK_") // the names went out masked
}

func TestInvalidAnswersAreRejectedTyped(t *testing.T) {
	for _, fixture := range []string{"invalid-json", "schema-violation", "oversized"} {
		t.Run(fixture, func(t *testing.T) {
			_, err, _ := analyze(t, fixture)
			require.Error(t, err)
			require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), capstan.ErrorMessage(err))
			require.Contains(t, capstan.ErrorMessage(err), "model answer rejected")
		})
	}
}

func TestACitationOfNothingIsDroppedAndCounted(t *testing.T) {
	a, err, _ := analyze(t, "bad-citation")
	require.NoError(t, err)
	require.Len(t, a.Findings, 1)
	require.Equal(t, "pull-images", a.Findings[0].Node)
	require.Equal(t, 2, a.DroppedFindings) // migrate-db does not exist; a finding without citations rests on nothing
}

func TestAPatchThatWeakensAGatePassesTheAnalyzerOnlyAsAProposal(t *testing.T) {
	// The analyzer returns it, typed as a proposal; the service's judge
	// refuses it before anyone sees it as PROPOSED (service tests).
	a, err, _ := analyze(t, "weakens-gate")
	require.NoError(t, err)
	require.Equal(t, capstan.ChangeRemove, a.ProposedPatch[0].Op)
	require.Equal(t, "approve-prod", a.ProposedPatch[0].Node)
}

func TestATimeoutIsUnavailable(t *testing.T) {
	start := time.Now()
	_, err, _ := analyze(t, "timeout", func(c *modelanalyzer.Config) { c.Timeout, c.Retries = 300*time.Millisecond, -1 })
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err), capstan.ErrorMessage(err))
	require.Less(t, time.Since(start), 2*time.Second)
}

func TestThrottlingIsRetriedAfterItsRetryAfter(t *testing.T) {
	start := time.Now()
	a, err, srv := analyze(t, "rate-limited")
	require.NoError(t, err)
	require.Equal(t, capstan.AnalysisReview, a.Kind)
	require.Len(t, srv.Requests(), 2)
	require.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond, "Retry-After: 1 was honoured")
}

func TestThrottlingPastTheRetriesIsRateLimited(t *testing.T) {
	_, err, _ := analyze(t, "rate-limited", func(c *modelanalyzer.Config) { c.Retries = -1 })
	require.Equal(t, capstan.ERATELIMITED, capstan.ErrorCode(err))
}

func TestAToolCallLoopEnds(t *testing.T) {
	_, err, srv := analyze(t, "tool-loop", func(c *modelanalyzer.Config) { c.MaxToolRounds = 3 })
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	require.Contains(t, capstan.ErrorMessage(err), "kept calling tools")
	require.Len(t, srv.Requests(), 4) // three rounds of tools, then the request without them
}

func TestToolsReadAndAreRecorded(t *testing.T) {
	a, err, srv := analyze(t, "tools-then-answer")
	require.NoError(t, err)
	require.Len(t, a.Model.ToolCalls, 2)
	require.Equal(t, "node_output", a.Model.ToolCalls[0].Tool)
	require.Equal(t, "dependencies", a.Model.ToolCalls[1].Tool)
	require.Len(t, a.Findings, 1, "a resource read through a tool may be cited")
	require.Zero(t, a.DroppedFindings)
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	require.Contains(t, reqs[2], "degraded") // the tool's answer went back to the model
	require.Equal(t, int64(360), a.Model.PromptTokens)
}

func TestTheBudgetRefusesBeforeSending(t *testing.T) {
	srv := reviewingForever(t)
	// Each request reserves MaxTokens and a quarter of its prompt's bytes
	// (about 600 here) and spends 160: the operation's 3,000 allow a few.
	const perOp, perOrg = 3000, 7000
	a, err := modelanalyzer.New(modelanalyzer.Config{Endpoint: srv.URL, Model: "m", MaxTokens: 100, OperationTokens: perOp, OrganizationTokens: perOrg})
	require.NoError(t, err)
	in := seedInput()
	sent := func() int { return len(srv.Requests()) }
	for sent() < 100 {
		if _, err = a.Analyze(context.Background(), in); err != nil {
			break
		}
	}
	require.Equal(t, capstan.ERATELIMITED, capstan.ErrorCode(err))
	require.Contains(t, capstan.ErrorMessage(err), "operation op-1")
	n := sent()
	require.Greater(t, n, 1)
	require.LessOrEqual(t, n*160, perOp, "never spent past the cap")
	for i := 2; sent() < 100; i++ { // other operations, until the organization's day is spent
		in.OperationID = fmt.Sprintf("op-%d", i)
		if _, err = a.Analyze(context.Background(), in); err != nil {
			break
		}
	}
	require.Equal(t, capstan.ERATELIMITED, capstan.ErrorCode(err))
	require.Contains(t, capstan.ErrorMessage(err), "organization")
	require.LessOrEqual(t, sent()*160, perOrg)
	before := sent()
	_, err = a.Analyze(context.Background(), in)
	require.Equal(t, capstan.ERATELIMITED, capstan.ErrorCode(err))
	require.Equal(t, before, sent(), "a refused request is never sent")
}

func TestConcurrentAnalysesShareOneBudget(t *testing.T) {
	srv := reviewingForever(t)
	a, err := modelanalyzer.New(modelanalyzer.Config{Endpoint: srv.URL, Model: "m", MaxTokens: 100, OrganizationTokens: 3000})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := seedInput()
			in.OperationID = fmt.Sprintf("op-%d", i)
			_, _ = a.Analyze(context.Background(), in)
		}()
	}
	wg.Wait()
	require.Less(t, len(srv.Requests()), 20, "reservations: twenty at once cannot all pass one check")
}

func TestConfigurationIsChecked(t *testing.T) {
	_, err := modelanalyzer.New(modelanalyzer.Config{})
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	require.True(t, strings.Contains(capstan.ErrorMessage(err), "endpoint") && strings.Contains(capstan.ErrorMessage(err), "model"))
}

// reviewingForever is a fake server that answers every request with the
// rate-limited fixture's good review (160 tokens).
func reviewingForever(t *testing.T) *fakemodel.Server {
	f, err := fakemodel.Load(filepath.Join("testdata", "fixtures", "rate-limited.json"))
	require.NoError(t, err)
	f.Replies = f.Replies[1:]
	f.Replies[0].Repeat = true
	srv := fakemodel.Start(f)
	t.Cleanup(srv.Close)
	return srv
}
