package main_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// durablePack is an operation with kill points worth testing: an
// idempotent job, a non-idempotent job that does its work before a slow
// exit, a gate, and a non-idempotent job whose evidence probe is slow.
const durablePack = `id: durability
version: 1.0.0
scenarios:
  - id: thing.durable
    action: durable
    target_resource_type: thing
    plan:
      nodes:
        - id: step-a
          type: job
          title: Idempotent, slow
          job:
            run: {runner: shell, script: 'echo run >> a.runs; touch a.started; sleep 0.5; touch a.done'}
            outputs: {evidence: [{name: a-done, type: command, script: 'test -f a.done'}]}
            controls: {idempotent: true, retry: {initial_interval: 10ms, maximum_attempts: 3}}
        - id: step-b
          type: job
          title: Not idempotent, works then lingers
          after: [step-a]
          job:
            run: {runner: shell, script: 'echo run >> b.runs; touch b.done; sleep 1'}
            outputs: {evidence: [{name: b-done, type: command, script: 'test -f b.done'}]}
            controls: {idempotent: false}
        - id: approve
          type: gate
          title: Approve
          after: [step-b]
          gate: {type: approval, reason: Continue, required_roles: [sre], approvals: 1}
        - id: step-c
          type: job
          title: Not idempotent, slow evidence
          after: [approve]
          job:
            run: {runner: shell, script: 'echo run >> c.runs; touch c.done'}
            outputs: {evidence: [{name: c-done, type: command, script: 'touch c.probing; sleep 1; test -f c.done'}]}
            controls: {idempotent: false}
        - id: done
          type: verification
          title: Verify
          after: [step-c]
          probes: [{name: all-done, type: command, script: 'test -f a.done && test -f b.done && test -f c.done'}]
`

type killPoint struct {
	name string
	// ready says, from the operation's sandbox, when to kill.
	ready func(sandbox string) bool
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

var killPoints = []killPoint{
	{"during an idempotent job", func(s string) bool { return exists(s, "a.started") && !exists(s, "a.done") }},
	{"after a non-idempotent job did its work", func(s string) bool { return exists(s, "b.done") }},
	{"while a gate waits", nil},
	{"between a job and its evidence", func(s string) bool { return exists(s, "c.probing") }},
}

// TestSIGKILLAtEveryPointReachesTheSameEnd kills the real server with
// SIGKILL at several points of a multi-node operation, restarts it, and
// checks the operation ends as an uninterrupted run does, with no
// non-idempotent job run twice and no timeline gap — on both stores.
func TestSIGKILLAtEveryPointReachesTheSameEnd(t *testing.T) {
	t.Parallel()
	packs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(packs, "durability.yaml"), []byte(durablePack), 0o600))
	for store, args := range bothStores(t, "--packs", packs, "--keep-sandboxes") {
		for _, kp := range killPoints {
			t.Run(store+"/"+kp.name, func(t *testing.T) { runKilled(t, args, kp) })
		}
	}
}

func runKilled(t *testing.T, args []string, kp killPoint) {
	dir := t.TempDir()
	p := start(t, dir, args...)
	id := p.gql(t, `mutation { createIntent(input: {action: "durable", targetResourceType: "thing", constraints: {environment: "dev"}}) { id } }`, nil)["createIntent"].(map[string]any)["id"]
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status } }`, map[string]any{"id": id})["planIntent"].(map[string]any)
	require.Equal(t, "READY", plan["status"])
	op := p.gql(t, `mutation($plan: ID!, $key: String) { startOperation(input: {plan: $plan, idempotencyKey: $key}) { id } }`,
		map[string]any{"plan": plan["id"], "key": "kill-" + dir})["startOperation"].(map[string]any)["id"].(string)
	local := localOf(t, op)
	sandbox := filepath.Join(jobsOf(dir), "sandbox", local)

	deadline := time.Now().Add(30 * time.Second)
	for {
		require.True(t, time.Now().Before(deadline), "never reached the kill point")
		waiting := status(t, p, op) == "WAITING"
		if kp.ready == nil && waiting {
			break
		}
		if kp.ready != nil && kp.ready(sandbox) {
			break
		}
		if waiting {
			approve(t, p, op)
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done

	again := start(t, dir, args...)
	approved := false
	deadline = time.Now().Add(60 * time.Second)
	for {
		require.True(t, time.Now().Before(deadline), "the operation did not finish after the restart:\n%s", again.output())
		s := status(t, again, op)
		if s == "SUCCEEDED" || s == "FAILED" || s == "CANCELLED" {
			require.Equal(t, "SUCCEEDED", s)
			break
		}
		if s == "WAITING" && !approved {
			approved = approve(t, again, op)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, f := range []string{"b.runs", "c.runs"} {
		data, err := os.ReadFile(filepath.Join(sandbox, f))
		require.NoError(t, err)
		require.Equal(t, 1, strings.Count(string(data), "run"), "%s: a non-idempotent job ran once", f)
	}
	res := again.gql(t, `query($id: ID!) { operation(id: $id) { nodeRuns { node status } timeline(first: 500) { edges { node { sequence type } } } } }`, map[string]any{"id": op})["operation"].(map[string]any)
	for _, r := range res["nodeRuns"].([]any) {
		require.Equal(t, "SUCCEEDED", r.(map[string]any)["status"], "node %v", r)
	}
	require.Len(t, res["nodeRuns"], 5)
	for i, e := range res["timeline"].(map[string]any)["edges"].([]any) {
		require.Equal(t, float64(i+1), e.(map[string]any)["node"].(map[string]any)["sequence"], "no timeline gap")
	}
	again.stop(t)
}

// approve approves the operation's gate; false when it could not (yet).
func approve(t *testing.T, p *proc, op string) bool {
	data, errs := p.try(t, `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve", approve: true}) { status } }`, map[string]any{"op": op})
	return len(errs) == 0 && data["decideGate"].(map[string]any)["status"] == "APPROVED"
}

func status(t *testing.T, p *proc, op string) string {
	data, errs := p.try(t, `query($id: ID!) { operation(id: $id) { status } }`, map[string]any{"id": op})
	if len(errs) > 0 || data["operation"] == nil {
		return ""
	}
	return data["operation"].(map[string]any)["status"].(string)
}

// localOf decodes a global id (base64url of Kind:id) to the local id.
func localOf(t *testing.T, gid string) string {
	t.Helper()
	raw, err := decodeID(gid)
	require.NoError(t, err)
	_, id, ok := strings.Cut(raw, ":")
	require.True(t, ok)
	return id
}

func decodeID(gid string) (string, error) {
	b, err := base64RawURL(gid)
	return string(b), err
}

func base64RawURL(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
