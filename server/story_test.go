package server_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSeedPatchStory is the seed's §8 story over GraphQL: a kubernetes
// cluster create on a host without registry access fails in
// init-control-plane; the rule analyzer reports the missing capability
// and proposes inserting configure-registry-mirror after
// install-containerd and retrying init-control-plane; a second person
// approves; revision 2 applies and the operation succeeds.
func TestSeedPatchStory(t *testing.T) {
	_, ts := operationServer(t)
	created := post(t, ts, adminToken, `mutation { createIntent(input: {action: "create", targetResourceType: "kubernetes.cluster", mode: ADVANCED,
	  desiredResult: {name: "demo-k8s"}, constraints: {environment: "prod"},
	  providers: [{requirement: "hosts", provider: "compute.node/prod-worker-3"}]}) { id } }`, nil)
	require.Empty(t, created.Errors)
	planned := post(t, ts, adminToken, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": get(created.Data, "createIntent", "id")})
	require.Empty(t, planned.Errors)
	require.Equal(t, "READY", get(planned.Data, "planIntent", "status"), "%v", get(planned.Data, "planIntent", "problems"))
	planID := get(planned.Data, "planIntent", "id")
	started := post(t, ts, adminToken, `mutation($plan: ID!) { startOperation(input: {plan: $plan}) { id } }`, map[string]any{"plan": planID})
	require.Empty(t, started.Errors)
	opID := get(started.Data, "startOperation", "id")

	const query = `query($id: ID!) { operation(id: $id) { status planRevision currentNodes progress { patchesAwaitingApproval needsAttention }
	  nodeRuns { node status attempts revision error }
	  patches { id status digest author reason changes { op node template } outstanding { rule approvals }
	    analysis { analyzer node diagnosis missingCapabilities evidence } }
	  timeline(first: 500) { edges { node { type } } } } }`
	var op map[string]any
	until := func(what string, ok func(map[string]any) bool) {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			r := post(t, ts, adminToken, query, map[string]any{"id": opID})
			require.Empty(t, r.Errors)
			if op = get(r.Data, "operation").(map[string]any); ok(op) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s never happened: %v", what, op)
	}
	// The fields of one request are read one after another, not from one
	// snapshot: wait until the proposal shows in all of them.
	until("the analyzer's proposal", func(o map[string]any) bool {
		return len(o["patches"].([]any)) > 0 && get(o, "progress", "patchesAwaitingApproval") == float64(1) && o["status"] == "WAITING"
	})
	require.Equal(t, "WAITING", op["status"])
	runs := map[string]map[string]any{}
	for _, r := range op["nodeRuns"].([]any) {
		runs[get(r, "node").(string)] = r.(map[string]any)
	}
	require.Equal(t, "FAILED", runs["init-control-plane"]["status"])

	// Every artifact id the operation shows is one Query.node takes — in
	// its organization only.
	arts := post(t, ts, adminToken, `query($id: ID!) { operation(id: $id) { artifacts { id name } } }`, map[string]any{"id": opID})
	require.Empty(t, arts.Errors)
	require.NotEmpty(t, get(arts.Data, "operation", "artifacts"))
	for _, a := range get(arts.Data, "operation", "artifacts").([]any) {
		n := post(t, ts, adminToken, `query($id: ID!) { node(id: $id) { id ... on Artifact { name producedBy } } }`, map[string]any{"id": get(a, "id")})
		require.Empty(t, n.Errors)
		require.Equal(t, get(a, "id"), get(n.Data, "node", "id"))
		require.Equal(t, get(a, "name"), get(n.Data, "node", "name"))
		other := post(t, ts, otherToken, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": get(a, "id")})
		require.Empty(t, other.Errors)
		require.Nil(t, get(other.Data, "node"), "another organization's artifact")
	}
	require.Contains(t, runs["init-control-plane"]["error"], "registry-reachable")
	require.Equal(t, "SUCCEEDED", runs["install-containerd"]["status"])

	patch := op["patches"].([]any)[0].(map[string]any)
	require.Equal(t, "PROPOSED", patch["status"])
	require.Equal(t, "ai-agent:rules", patch["author"])
	require.Equal(t, []any{map[string]any{"op": "INSERT_AFTER", "node": "install-containerd", "template": "configure-registry-mirror"},
		map[string]any{"op": "RETRY", "node": "init-control-plane", "template": nil}}, patch["changes"])
	require.Equal(t, []any{"network.registry_access on compute.node/prod-worker-3"}, get(patch, "analysis", "missingCapabilities"))
	require.NotEmpty(t, get(patch, "analysis", "evidence"), "the proposal cites the failed evidence")
	require.Equal(t, float64(1), get(op, "progress", "patchesAwaitingApproval"))
	require.Contains(t, get(op, "progress", "needsAttention"), "plan patch "+patch["id"].(string)+" awaits approval", "simple mode says what waits, by the id the API takes")

	// Two people approve (the analyzer never could; in prod its patch
	// needs two, neither the proposer); revision 2 applies.
	const decide = `mutation($p: ID!, $d: String!) { decidePlanPatch(input: {patch: $p, approve: true, digest: $d}) { status appliedRevision outstanding { rule approvals } } }`
	one := post(t, ts, viewerToken, decide, map[string]any{"p": patch["id"], "d": patch["digest"]})
	require.Empty(t, one.Errors)
	require.Equal(t, "PROPOSED", get(one.Data, "decidePlanPatch", "status"), "one person is not enough in prod")
	require.Equal(t, []any{map[string]any{"rule": "prod-second-person", "approvals": float64(1)}}, get(one.Data, "decidePlanPatch", "outstanding"))
	ok := post(t, ts, secondSRE, decide, map[string]any{"p": patch["id"], "d": patch["digest"]})
	require.Empty(t, ok.Errors)
	require.Equal(t, "APPLIED", get(ok.Data, "decidePlanPatch", "status"))

	until("the join gate", func(o map[string]any) bool {
		for _, n := range o["currentNodes"].([]any) {
			if n == "approve-join" {
				return true
			}
		}
		return false
	})
	gate := post(t, ts, viewerToken, `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve-join", approve: true}) { status } }`, map[string]any{"op": opID})
	require.Empty(t, gate.Errors)
	until("success", func(o map[string]any) bool { return o["status"] == "SUCCEEDED" })
	require.Equal(t, float64(2), op["planRevision"])
	for _, r := range op["nodeRuns"].([]any) {
		runs[get(r, "node").(string)] = r.(map[string]any)
	}
	require.Equal(t, "SUCCEEDED", runs["configure-registry-mirror"]["status"])
	require.Equal(t, float64(2), runs["configure-registry-mirror"]["revision"])
	require.Equal(t, "SUCCEEDED", runs["init-control-plane"]["status"])
	require.Equal(t, float64(2), runs["init-control-plane"]["revision"], "the retry ran on revision 2")

	diff := post(t, ts, adminToken, `query($plan: ID!) { planDiff(plan: $plan, from: 1, to: 2) { nodesAdded { key template } edgesAdded { from to } } }`, map[string]any{"plan": planID})
	require.Empty(t, diff.Errors)
	require.Equal(t, "configure-registry-mirror", get(diff.Data, "planDiff", "nodesAdded", 0, "key"))
	require.Contains(t, get(diff.Data, "planDiff", "edgesAdded"), map[string]any{"from": "install-containerd", "to": "configure-registry-mirror"})
	var types []string
	for _, e := range get(op, "timeline", "edges").([]any) {
		types = append(types, get(e, "node", "type").(string))
	}
	require.Subset(t, types, []string{"node.failed", "operation.needs_attention", "patch.proposed", "patch.decided", "patch.applied", "plan.revised", "node.reset", "operation.succeeded"})
}
