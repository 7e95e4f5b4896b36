package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/neo4jtest"
)

// sweepPack is one operation with every kind of commit worth crashing
// at: two non-idempotent jobs with compensations, a gate a person
// approves, a sub-operation that creates the store a job needs, a
// PlanPatch applied while the gate waits (it inserts a job that fails),
// and so a rollback that runs both compensations. An uninterrupted run
// ends ROLLED_BACK.
const sweepPack = `id: sweep
version: 1.0.0
provides: [sweep.store]
resource_types:
  - {key: sweep.thing, display_name: Sweep thing, allowed_actions: [install]}
  - {key: sweep.store, display_name: Sweep store, allowed_actions: [install], default_capabilities: [sweep.store]}
capabilities:
  - key: sweep.store
    category: storage
    description: A store the sweep makes.
    constraint_schema:
      environment: {type: string}
node_templates:
  - name: break
    node:
      type: job
      title: Breaks
      job:
        run: {runner: shell, script: 'echo run >> break.runs; exit 4'}
        outputs: {evidence: [{name: never, type: command, script: 'false'}]}
        controls: {idempotent: true, retry: {maximum_attempts: 1}}
scenarios:
  - id: sweep.store.install
    action: install
    target_resource_type: sweep.store
    provides: [{capability: sweep.store}]
    plan:
      nodes:
        - id: make
          type: job
          title: Make the store
          job:
            run: {runner: shell, script: 'echo run >> make.runs; touch made'}
            outputs: {capabilities: [sweep.store], evidence: [{name: made, type: command, script: 'test -f made'}]}
            controls: {idempotent: true}
  - id: sweep.thing.install
    action: install
    target_resource_type: sweep.thing
    editable: true
    requires:
      - {id: store, capability: sweep.store, strategy: create, constraints: {environment: "${intent.environment}"}}
    plan:
      nodes:
        - id: first
          type: job
          title: First, not idempotent
          job:
            run: {runner: shell, script: 'echo run >> first.runs; touch first.done'}
            outputs: {evidence: [{name: first-done, type: command, script: 'test -f first.done'}]}
            controls:
              idempotent: false
              rollback: {strategy: compensate, compensation: {runner: shell, script: 'echo undo >> first.undo; rm -f first.done'}, evidence: [{name: first-undone, type: command, script: 'test ! -f first.done'}]}
        - id: approve
          type: gate
          title: Approve
          after: [first]
          gate: {type: approval, reason: Go on, required_roles: [sre], approvals: 1}
        - id: use-store
          type: job
          title: Uses the store, not idempotent
          after: [approve]
          requires: [store]
          job:
            run: {runner: shell, script: 'echo run >> use.runs; touch use.done'}
            outputs: {evidence: [{name: use-done, type: command, script: 'test -f use.done'}]}
            controls:
              idempotent: false
              rollback: {strategy: compensate, compensation: {runner: shell, script: 'echo undo >> use.undo; rm -f use.done'}, evidence: [{name: use-undone, type: command, script: 'test ! -f use.done'}]}
`

var (
	crashBinaryOnce sync.Once
	crashBinary     string
	crashBuildErr   error
)

// crashBin is the server built with crash points (build tag crashpoints).
func crashBin(t *testing.T) string {
	t.Helper()
	crashBinaryOnce.Do(func() {
		crashBinary = filepath.Join(filepath.Dir(binary), "capstan-crash")
		out, err := exec.Command("go", "build", "-tags", "crashpoints", "-o", crashBinary, ".").CombinedOutput()
		if err != nil {
			crashBuildErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	require.NoError(t, crashBuildErr)
	return crashBinary
}

// sweep is one store's setting for crash runs.
type sweep struct {
	args  []string // the store's flags
	packs string
	fresh func(t *testing.T) (dir string, extra []string) // a data directory and organization of its own
}

const sweepSRE = "process-test-token-0123456789-sre"

var commitLine = regexp.MustCompile(`crashpoint: commit (\d+) `)

// crashRun is what one run through the sweep's operation ended with.
type crashRun struct {
	commits int  // commits the first process made (all of them when it did not crash)
	crashed bool // the first process died at the crash point
}

// runSweep drives the sweep's operation to its end as people would —
// start it, propose the patch while the gate waits, approve the gate,
// and for a non-idempotent job a crash left unproven, do its work by
// hand and record it — on a server that crashes after commit crashAt
// (0: never), restarting it after the crash, then checks the end is the
// uninterrupted run's.
func runSweep(t *testing.T, s sweep, crashAt int) crashRun {
	dir, extra := s.fresh(t)
	bin := crashBin(t)
	args := append(append([]string{"--packs", s.packs, "--keep-sandboxes"}, s.args...), extra...)
	launchCrashing := func(at int) *proc {
		p := launchWith(t, func(cmd *exec.Cmd) {
			cmd.Path = bin
			cmd.Env = append(cmd.Env, "CAPSTAN_CRASH_AT_COMMIT="+strconv.Itoa(at))
		}, dir, args...)
		return p
	}
	p := launchCrashing(crashAt)
	first := p
	p.waitReady(t, 60*time.Second)

	in := p.gql(t, `mutation { createIntent(input: {action: "install", targetResourceType: "sweep.thing", mode: ADVANCED, desiredResult: {name: "swept"}, constraints: {environment: "dev"}}) { id } }`, nil)
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": in["createIntent"].(map[string]any)["id"]})["planIntent"].(map[string]any)
	require.Equal(t, "READY", plan["status"], "%v", plan["problems"])

	crashed := false
	var op string
	deadline := time.Now().Add(90 * time.Second)
	for {
		require.True(t, time.Now().Before(deadline), "the operation did not end (crash at %d):\n%s", crashAt, p.output())
		select {
		case <-p.done: // the crash point: start again, without one
			require.False(t, crashed, "crashed twice")
			crashed = true
			p = launchCrashing(0)
			p.waitReady(t, 60*time.Second)
		default:
		}
		if op == "" {
			r, err := postQuiet(p, token, `mutation($p: ID!, $k: String) { startOperation(input: {plan: $p, idempotencyKey: $k}) { id } }`, map[string]any{"p": plan["id"], "k": "sweep"})
			if err != nil || len(r.Errors) > 0 {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			op = r.Data["startOperation"].(map[string]any)["id"].(string)
		}
		r, err := postQuiet(p, token, `query($id: ID!) { operation(id: $id) { status patches { status } nodeRuns { node status error } } }`, map[string]any{"id": op})
		if err != nil || len(r.Errors) > 0 {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		got := r.Data["operation"].(map[string]any)
		status := got["status"].(string)
		if status == "SUCCEEDED" || status == "FAILED" || status == "CANCELLED" || status == "ROLLED_BACK" {
			break
		}
		runs := map[string]map[string]any{}
		for _, x := range got["nodeRuns"].([]any) {
			runs[x.(map[string]any)["node"].(string)] = x.(map[string]any)
		}
		if runs["approve"]["status"] == "WAITING_APPROVAL" {
			if len(got["patches"].([]any)) == 0 {
				_, _ = postQuiet(p, token, `mutation($op: ID!) { proposePlanPatch(input: {operation: $op, baseRevision: 1, reason: "break it",
				  changes: [{op: INSERT_AFTER, node: "use-store", template: "break"}]}) { status } }`, map[string]any{"op": op})
			} else {
				_, _ = postQuiet(p, sweepSRE, `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve", approve: true}) { status } }`, map[string]any{"op": op})
			}
		}
		for _, node := range []string{"first", "use-store"} {
			if runs[node]["status"] == "WAITING_INTERVENTION" {
				// A crash came between the job's start and its process: it
				// never ran (its runs file says so) and is not re-run by
				// itself. The person does its work and records it.
				sandbox := filepath.Join(dir, "executor", "sandbox", localOf(t, op))
				short := strings.TrimSuffix(node, "-store")
				require.Equal(t, 0, runsIn(t, sandbox, short+".runs"), "%s needs attention after it ran: %v", node, runs[node]["error"])
				require.NoError(t, os.WriteFile(filepath.Join(sandbox, short+".done"), nil, 0o666))
				_, _ = postQuiet(p, token, `mutation($op: ID!, $n: String!) { recordIntervention(input: {operation: $op, node: $n, note: "did it by hand after the crash"}) { type } }`,
					map[string]any{"op": op, "n": node})
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	commits := len(commitLine.FindAllString(first.output(), -1))
	checkSweepEnd(t, p, dir, op)
	p.stop(t)
	return crashRun{commits: commits, crashed: crashed}
}

// runsIn counts the "run" lines a job appended to a file of its sandbox.
func runsIn(t *testing.T, sandbox, file string) int {
	data, err := os.ReadFile(filepath.Join(sandbox, file))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "run")
}

// checkSweepEnd holds the operation's end to the uninterrupted run's: it
// rolled back, no non-idempotent job ran twice, one sub-operation
// started, and neither timeline has a gap.
func checkSweepEnd(t *testing.T, p *proc, dir, op string) {
	t.Helper()
	const q = `query($id: ID!) { operation(id: $id) { status nodeRuns { node status } timeline(first: 500) { edges { node { sequence type payload } } } } }`
	got := p.gql(t, q, map[string]any{"id": op})["operation"].(map[string]any)
	require.Equal(t, "ROLLED_BACK", got["status"], "%v\n%s", got["nodeRuns"], p.gql(t, `query($id: ID!) { operation(id: $id) { nodeRuns { node status error } timeline(first: 500) { edges { node { type payload } } } } }`, map[string]any{"id": op}))
	sandbox := filepath.Join(dir, "executor", "sandbox", localOf(t, op))
	for _, f := range []string{"first.runs", "use.runs"} {
		require.LessOrEqual(t, runsIn(t, sandbox, f), 1, "%s: a non-idempotent job ran twice", f)
	}
	var children []string
	for i, e := range got["timeline"].(map[string]any)["edges"].([]any) {
		n := e.(map[string]any)["node"].(map[string]any)
		require.Equal(t, float64(i+1), n["sequence"], "no timeline gap")
		if n["type"] == "suboperation.started" {
			children = append(children, n["payload"].(map[string]any)["child"].(string))
		}
	}
	require.Len(t, children, 1, "one sub-operation started")
	total := p.gql(t, `{ operations { totalCount } }`, nil)["operations"].(map[string]any)["totalCount"]
	require.Equal(t, float64(2), total, "the operation and its one child")
	child := p.gql(t, q, map[string]any{"id": children[0]})["operation"].(map[string]any)
	require.Equal(t, "SUCCEEDED", child["status"])
	for i, e := range child["timeline"].(map[string]any)["edges"].([]any) {
		require.Equal(t, float64(i+1), e.(map[string]any)["node"].(map[string]any)["sequence"], "no timeline gap in the child")
	}
}

// sweepPoints are the crash points to cover out of total commits: every
// one with CAPSTAN_CRASH_SWEEP=all (make crash-sweep), else a sample
// spread over the run (make test).
func sweepPoints(total int, sample int) []int {
	if os.Getenv("CAPSTAN_CRASH_SWEEP") == "all" {
		out := make([]int, total)
		for i := range out {
			out[i] = i + 1
		}
		return out
	}
	seen := map[int]bool{}
	var out []int
	for i := range sample {
		n := 1 + i*(total-1)/max(sample-1, 1)
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// TestCrashAtEveryCommit kills the server (SIGKILL, from inside, right
// after the commit) at every durable commit of an operation with a gate
// decision, a sub-operation, a PlanPatch application and a compensation,
// restarts it, and holds each run's end to the uninterrupted run's: on
// the embedded store at every commit (make crash-sweep) or a sample
// (make test), on Neo4j at a sample.
func TestCrashAtEveryCommit(t *testing.T) {
	packs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(packs, "sweep.yaml"), []byte(sweepPack), 0o600))
	embedded := sweep{packs: packs, fresh: func(t *testing.T) (string, []string) { return t.TempDir(), nil }}
	whole := runSweep(t, embedded, 0)
	require.False(t, whole.crashed)
	require.Greater(t, whole.commits, 10, "the uninterrupted run's commits")
	t.Logf("an uninterrupted run makes %d commits", whole.commits)

	covered := 0
	for _, n := range sweepPoints(whole.commits, 6) {
		t.Run(fmt.Sprintf("embedded/commit-%02d", n), func(t *testing.T) {
			run := runSweep(t, embedded, n)
			require.True(t, run.crashed, "commit %d was never reached (%d commits)", n, run.commits)
			covered++
		})
	}
	t.Logf("embedded: %d of %d crash points covered", covered, whole.commits)

	db, err := neo4jtest.Start(context.Background())
	require.NoError(t, err, "Neo4j is part of the test suite")
	t.Cleanup(func() { db.Close() })
	onNeo4j := sweep{packs: packs, args: []string{"--store", "neo4j", "--neo4j-uri", db.URI}, fresh: func(t *testing.T) (string, []string) {
		dir := t.TempDir()
		org := fmt.Sprintf("sweep-%d", time.Now().UnixNano())
		tokens := filepath.Join(dir, "tokens.yaml")
		require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf("tokens:\n  - {token: %q, actor: alice, organization: %s, roles: [admin]}\n  - {token: %q, actor: bob, organization: %s, roles: [sre]}\n",
			token, org, sweepSRE, org)), 0o600))
		return dir, []string{"--tokens", tokens}
	}}
	for _, n := range sweepPoints(whole.commits, 3) {
		t.Run(fmt.Sprintf("neo4j/commit-%02d", n), func(t *testing.T) {
			run := runSweep(t, onNeo4j, n)
			require.True(t, run.crashed, "commit %d was never reached (%d commits)", n, run.commits)
		})
	}
}
