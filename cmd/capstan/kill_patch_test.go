package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// patchablePack is an operation that waits at a gate while patches insert
// node after node behind it, each applied at once (outside prod, touching
// no gate, nothing asks for an approval).
const patchablePack = `id: patchable
version: 1.0.0
node_templates:
  - name: noop
    node: {type: verification, title: No-op, probes: [{name: ok, type: sim}]}
scenarios:
  - id: thing.patchable
    action: patch
    target_resource_type: thing
    editable: true
    plan:
      nodes:
        - {id: step-a, type: job, title: A, job: {run: {runner: sim}, outputs: {evidence: [{name: a, type: sim}]}}}
        - {id: approve, type: gate, title: Approve, after: [step-a], gate: {type: approval, reason: Continue, required_roles: [sre], approvals: 1}}
        - {id: step-b, type: job, title: B, after: [approve], job: {run: {runner: sim}, outputs: {evidence: [{name: b, type: sim}]}}}
`

// TestSIGKILLDuringPatchApplication proposes patches to a running
// operation as fast as the server takes them and kills the server with
// SIGKILL meanwhile, several times: after each restart the plan is at
// revision N or N+1 of every patch, never a mix — the operation on the
// plan's revision, a snapshot of every revision chained by digests, one
// applied patch per revision after the first, no gap in the timeline —
// and the operation then runs every inserted node. On both stores.
func TestSIGKILLDuringPatchApplication(t *testing.T) {
	t.Parallel()
	packs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(packs, "patchable.yaml"), []byte(patchablePack), 0o600))
	for store, args := range bothStores(t, "--packs", packs) {
		t.Run(store, func(t *testing.T) { runKilledPatches(t, args) })
	}
}

const patchState = `query($id: ID!) { operation(id: $id) { status planRevision
  plan { revision digest nodes { key } revisions { revision digest parent kind patch { id } } }
  patches { id status appliedRevision } } }`

func runKilledPatches(t *testing.T, args []string) {
	dir := t.TempDir()
	p := start(t, dir, args...)
	id := p.gql(t, `mutation { createIntent(input: {action: "patch", targetResourceType: "thing", mode: ADVANCED, constraints: {environment: "dev"}}) { id } }`, nil)["createIntent"].(map[string]any)["id"]
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status } }`, map[string]any{"id": id})["planIntent"].(map[string]any)
	require.Equal(t, "READY", plan["status"])
	op := p.gql(t, `mutation($plan: ID!) { startOperation(input: {plan: $plan}) { id } }`, map[string]any{"plan": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
	for status(t, p, op) != "WAITING" {
		time.Sleep(10 * time.Millisecond)
	}
	next := 0
	for round := range 3 {
		revBefore := currentRevision(p.url, op)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Add(1)
		go func() { // propose until the server dies under us
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				rev := currentRevision(p.url, op)
				if rev == 0 {
					return // the server is gone
				}
				next++
				_, _ = postGQL(p.url, `mutation($op: ID!, $base: Int!, $id: String!) { proposePlanPatch(input: {operation: $op, baseRevision: $base,
				  reason: "one more", changes: [{op: INSERT_AFTER, node: "step-b", template: "noop", nodeId: $id}]}) { status } }`,
					map[string]any{"op": op, "base": rev, "id": fmt.Sprintf("n-%d-%d", round, next)})
			}
		}()
		// Kill once this round applied at least one patch (Neo4j takes
		// tens of milliseconds a patch, the embedded store a few), at a
		// random moment of the proposals that follow.
		deadline := time.Now().Add(30 * time.Second)
		for currentRevision(p.url, op) <= revBefore {
			require.True(t, time.Now().Before(deadline), "no patch applied in round %d:\n%s", round+1, p.output())
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
		<-p.done
		close(stop)
		wg.Wait()
		p = start(t, dir, args...)
		settled(t, p, op)
		o := checkRevisions(t, p, op)
		t.Logf("round %d: killed after %d proposals; the plan is at revision %d", round+1, next, int(o["planRevision"].(float64)))
	}
	require.True(t, approve(t, p, op))
	deadline := time.Now().Add(60 * time.Second)
	for status(t, p, op) != "SUCCEEDED" {
		require.True(t, time.Now().Before(deadline), "the operation did not finish:\n%s", p.output())
		time.Sleep(20 * time.Millisecond)
	}
	final := checkRevisions(t, p, op)
	require.Greater(t, len(final["plan"].(map[string]any)["nodes"].([]any)), 3, "patches were applied")
	runs := p.gql(t, `query($id: ID!) { operation(id: $id) { nodeRuns { node status } } }`, map[string]any{"id": op})["operation"].(map[string]any)["nodeRuns"].([]any)
	require.Len(t, runs, len(final["plan"].(map[string]any)["nodes"].([]any)), "every node of the last revision ran")
	p.stop(t)
}

// settled waits until the restarted server's executor decided every
// command the killed one had recorded and not applied (a proposal whose
// answer the kill cut off is applied now, or rejected).
func settled(t *testing.T, p *proc, op string) {
	t.Helper()
	require.Eventually(t, func() bool {
		cmds := p.gql(t, `query($id: ID!) { operation(id: $id) { commands { status } } }`, map[string]any{"id": op})["operation"].(map[string]any)["commands"].([]any)
		for _, c := range cmds {
			if c.(map[string]any)["status"] == "PENDING" {
				return false
			}
		}
		return true
	}, 30*time.Second, 10*time.Millisecond, "the commands the killed server recorded are decided")
}

// checkRevisions asserts that a restarted server shows one consistent
// revision N of the plan, and returns the operation it read.
func checkRevisions(t *testing.T, p *proc, op string) map[string]any {
	t.Helper()
	o := p.gql(t, patchState, map[string]any{"id": op})["operation"].(map[string]any)
	plan := o["plan"].(map[string]any)
	rev := int(plan["revision"].(float64))
	require.Equal(t, float64(rev), o["planRevision"], "the operation runs on the plan's revision")
	revs := plan["revisions"].([]any)
	require.Len(t, revs, rev, "a snapshot of every revision")
	parent := ""
	for i, r := range revs {
		r := r.(map[string]any)
		require.Equal(t, float64(i+1), r["revision"])
		if i > 0 {
			require.Equal(t, parent, r["parent"], "revision %d is made from revision %d", i+1, i)
			require.Equal(t, "PATCH", r["kind"])
			require.NotNil(t, r["patch"], "revision %d names its patch", i+1)
		}
		parent = r["digest"].(string)
	}
	require.Equal(t, parent, plan["digest"], "the plan is its last revision")
	applied := 0
	for _, pt := range o["patches"].([]any) {
		pt := pt.(map[string]any)
		if pt["status"] == "APPLIED" {
			applied++
			require.LessOrEqual(t, int(pt["appliedRevision"].(float64)), rev)
		}
	}
	require.Equal(t, rev-1, applied, "one applied patch per revision after the first")
	require.Len(t, plan["nodes"].([]any), 3+applied, "each applied patch inserted its node")
	seq, after := 0, any(nil)
	for {
		tl := p.gql(t, `query($id: ID!, $after: String) { operation(id: $id) { timeline(after: $after, first: 500) { edges { cursor node { sequence } } pageInfo { hasNextPage } } } }`,
			map[string]any{"id": op, "after": after})["operation"].(map[string]any)["timeline"].(map[string]any)
		for _, e := range tl["edges"].([]any) {
			seq++
			require.Equal(t, float64(seq), e.(map[string]any)["node"].(map[string]any)["sequence"], "no timeline gap")
			after = e.(map[string]any)["cursor"]
		}
		if tl["pageInfo"].(map[string]any)["hasNextPage"] != true {
			return o
		}
	}
}

func currentRevision(url, op string) int {
	data, err := postGQL(url, `query($id: ID!) { operation(id: $id) { planRevision } }`, map[string]any{"id": op})
	if err != nil || data == nil {
		return 0
	}
	o, _ := data["operation"].(map[string]any)
	if o == nil {
		return 0
	}
	return int(o["planRevision"].(float64))
}

// postGQL is a client that takes the server's death as an answer.
func postGQL(url, query string, vars map[string]any) (map[string]any, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct{ Data map[string]any }
	err = json.NewDecoder(resp.Body).Decode(&out)
	return out.Data, err
}
