package main_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/modelanalyzer/fakemodel"
)

// fakeModel serves a recorded fixture of modelanalyzer's testdata.
func fakeModel(t *testing.T, fixture string) *fakemodel.Server {
	t.Helper()
	f, err := fakemodel.Load(filepath.Join("..", "..", "modelanalyzer", "testdata", "fixtures", fixture+".json"))
	require.NoError(t, err)
	srv := fakemodel.Start(f)
	t.Cleanup(srv.Close)
	return srv
}

// modelArgs runs serve with the model analyzer on the fake server, the
// packs' rules off so that the model answers the failure they know.
func modelArgs(srv *fakemodel.Server) []string {
	return []string{"--analyzer", "openai", "--analyzer-endpoint", srv.URL + "/v1", "--analyzer-model", "fake-1",
		"--analyzer-rules", "off", "--analyzer-mask", `prod-worker-\d+`}
}

// TestDemoPatchWithTheModel is the seed's §8 story with the model
// analyzer (make demo-patch ANALYZER=openai against a configured
// endpoint): the model's patch is proposed as ai-agent:model, a person
// approves it, revision 2 succeeds. The invented citation is dropped,
// and the host's name never reached the model.
func TestDemoPatchWithTheModel(t *testing.T) {
	t.Parallel()
	srv := fakeModel(t, "seed-story")
	p := start(t, t.TempDir(), modelArgs(srv)...)
	defer p.kill()
	text := runScript(t, "demo-patch.sh", 4*time.Minute, "CAPSTAN_URL="+p.url+"/graphql", "CAPSTAN_DEV_TOKEN="+token, "CAPSTAN_EXPECT_ANALYZER=ai-agent:model")
	for _, want := range []string{"analysis  by ai-agent:model: kubeadm init cannot pull the control-plane images: prod-worker-3 has no access",
		"missing   network.registry_access", "proposes  INSERT_AFTER install-containerd configure-registry-mirror", "proposes  RETRY init-control-plane",
		"approved by dev-sre: PROPOSED revision None (prod-second-person needs 1 more)", "approved by dev-sre2: APPLIED revision 2", "operation SUCCEEDED on revision 2"} {
		require.True(t, strings.Contains(text, want), "%q missing from:\n%s", want, text)
	}
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	require.NotContains(t, reqs[0], "prod-worker-3", "masked by --analyzer-mask")
	require.Contains(t, reqs[0], "configure-registry-mirror", "the pack's templates are offered")
	require.NotContains(t, reqs[0], token)

	// The patch's analysis shows who answered, what it spent, and the
	// finding it dropped.
	r := p.gql(t, `{ operations(first: 1) { edges { node { patches { author analysis { analyzer droppedFindings findings { detail citations { kind id } }
		model { name promptDigest promptTokens completionTokens } } } } } } }`, nil)
	patches := r["operations"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)["patches"].([]any)
	require.Len(t, patches, 1)
	a := patches[0].(map[string]any)["analysis"].(map[string]any)
	require.Equal(t, "ai-agent:model", a["analyzer"])
	require.EqualValues(t, 1, a["droppedFindings"])
	require.Len(t, a["findings"], 2)
	m := a["model"].(map[string]any)
	require.Equal(t, "fake-1", m["name"])
	require.Regexp(t, `^sha256:`, m["promptDigest"])
	require.EqualValues(t, 120, m["promptTokens"])
	data, _ := json.Marshal(a["findings"])
	require.Contains(t, string(data), "compute.node/prod-worker-3", "the masked name came back in the answer")
}

// TestAnUnsafeModelPatchIsNeverProposed: a model that proposes removing
// a gate gets its proposal refused by the same rules as a person's,
// recorded on the timeline; no patch reaches PROPOSED.
func TestAnUnsafeModelPatchIsNeverProposed(t *testing.T) {
	t.Parallel()
	srv := fakeModel(t, "seed-story-unsafe")
	p := start(t, t.TempDir(), modelArgs(srv)...)
	defer p.kill()
	intent := p.gql(t, `mutation { createIntent(input: {action: "create", targetResourceType: "kubernetes.cluster", mode: ADVANCED,
		desiredResult: {name: "unsafe-k8s"}, constraints: {environment: "prod"}, providers: [{requirement: "hosts", provider: "compute.node/prod-worker-3"}]}) { id } }`, nil)
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status } }`, map[string]any{"id": intent["createIntent"].(map[string]any)["id"]})
	op := p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["planIntent"].(map[string]any)["id"]})
	id := op["startOperation"].(map[string]any)["id"]
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r := p.gql(t, `query($id: ID!) { operation(id: $id) { status patches { status } timeline(first: 500) { edges { node { type payload } } } } }`, map[string]any{"id": id})
		o := r["operation"].(map[string]any)
		require.Empty(t, o["patches"], "no patch of the model's was proposed")
		data, _ := json.Marshal(o["timeline"])
		if strings.Contains(string(data), "analysis.proposal_refused") {
			require.Contains(t, string(data), "approve-join")
			require.Equal(t, "WAITING", o["status"])
			break
		}
		require.True(t, time.Now().Before(deadline), "no refusal recorded: %s", data)
		time.Sleep(300 * time.Millisecond)
	}
}

// TestAHostileModelServer is issue 42's analyzer findings against a real
// server: a model that answers with a patch handing the job a secret
// (its own API key) gets it refused and recorded, never PROPOSED; a
// model that refuses every request leaves analysis.failed, with its
// code, on the operation's timeline — not only in the server's log.
func TestAHostileModelServer(t *testing.T) {
	t.Parallel()
	secretPatch := fakemodel.Fixture{About: "a patch that hands the job the analyzer's key", Replies: []fakemodel.Reply{{Repeat: true, Answer: json.RawMessage(`{
	  "kind": "patch", "diagnosis": "init-control-plane needs the registry key", "recommendation": "give it the key and retry",
	  "findings": [{"detail": "init-control-plane failed", "citations": [{"kind": "node", "id": "init-control-plane"}]}],
	  "proposed_patch": [
	   {"op": "set_parameters", "node": "init-control-plane", "template": "", "node_id": "", "parameters": [{"name": "registry_token", "value": "\"secret:analyzer-api-key\""}], "edge": {"from": "", "to": ""}, "requirement": "", "provider": "", "reason": "the key"},
	   {"op": "retry", "node": "init-control-plane", "template": "", "node_id": "", "parameters": [], "edge": {"from": "", "to": ""}, "requirement": "", "provider": "", "reason": "again"}],
	  "missing_capabilities": []}`)}}}
	refusing := fakemodel.Fixture{About: "every request refused", Replies: []fakemodel.Reply{{Repeat: true, Status: 400, Raw: `{"error": {"message": "content policy", "type": "invalid_request_error"}}`}}}
	srv := fakemodel.Start(secretPatch)
	t.Cleanup(srv.Close)
	p := start(t, t.TempDir(), modelArgs(srv)...)
	defer p.kill()
	run := func(name string) string {
		intent := p.gql(t, `mutation($n: String!) { createIntent(input: {action: "create", targetResourceType: "kubernetes.cluster", mode: ADVANCED,
			desiredResult: {name: $n}, constraints: {environment: "prod"}, providers: [{requirement: "hosts", provider: "compute.node/prod-worker-3"}]}) { id } }`, map[string]any{"n": name})
		plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status } }`, map[string]any{"id": intent["createIntent"].(map[string]any)["id"]})
		op := p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["planIntent"].(map[string]any)["id"]})
		return op["startOperation"].(map[string]any)["id"].(string)
	}
	waitTimeline := func(id, kind string) string {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			r := p.gql(t, `query($id: ID!) { operation(id: $id) { patches { status } timeline(first: 500) { edges { node { type actor payload } } } } }`, map[string]any{"id": id})
			o := r["operation"].(map[string]any)
			require.Empty(t, o["patches"], "no patch of the model's was proposed")
			data, _ := json.Marshal(o["timeline"])
			if strings.Contains(string(data), kind) {
				return string(data)
			}
			require.True(t, time.Now().Before(deadline), "no %s recorded: %s", kind, data)
			time.Sleep(300 * time.Millisecond)
		}
	}
	timeline := waitTimeline(run("secret-k8s"), "analysis.proposal_refused")
	require.Contains(t, timeline, "an analyzer never puts a secret into a plan")

	srv.Set(refusing)
	timeline = waitTimeline(run("refused-k8s"), "analysis.failed")
	require.Contains(t, timeline, `"actor":"ai-agent:model"`)
	require.Contains(t, timeline, "INVALID")
}
