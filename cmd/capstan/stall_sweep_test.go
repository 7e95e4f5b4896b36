package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/executor/shard"
	"github.com/capstan-dev/capstan/internal/neo4jtest"
	"github.com/capstan-dev/capstan/internal/testhosts"
)

// stallJob is a non-idempotent job on the test host that keeps the
// host's own record of every attempt: a start line (its TRACEPARENT names
// the operation, node and attempt) and an end line, and an overlap line
// if another attempt of any job held the host's lock meanwhile. The first
// job runs for longer than a lease term: a stall while it runs outlasts
// the replica's window.
func stallJob(name, seconds string) string {
	return `exec 9>>/root/stall.lock; flock -n 9 || echo overlap >> /root/stall.record; echo "start ` + name + ` $TRACEPARENT" >> /root/stall.record; touch /root/` +
		name + `.started; sleep ` + seconds + `; touch /root/` + name + `.done; echo "end ` + name + ` $TRACEPARENT" >> /root/stall.record`
}

// stallPack is the crash sweep's operation (sweepPack) with its two
// non-idempotent jobs and their compensations on a real sshd host: a
// gate, a sub-operation, a PlanPatch that inserts a failing job, and so a
// rollback. An uninterrupted run ends ROLLED_BACK.
var stallPack = `id: stall
version: 1.0.0
provides: [stall.store]
resource_types:
  - {key: stall.thing, display_name: Stall thing, allowed_actions: [install]}
  - {key: stall.store, display_name: Stall store, allowed_actions: [install], default_capabilities: [stall.store]}
capabilities:
  - key: stall.store
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
        run: {runner: shell, script: 'exit 4'}
        outputs: {evidence: [{name: never, type: command, script: 'false'}]}
        controls: {idempotent: true, retry: {maximum_attempts: 1}}
scenarios:
  - id: stall.store.install
    action: install
    target_resource_type: stall.store
    provides: [{capability: stall.store}]
    plan:
      nodes:
        - id: make
          type: job
          title: Make the store
          job:
            run: {runner: shell, script: 'touch made'}
            outputs: {capabilities: [stall.store], evidence: [{name: made, type: command, script: 'test -f made'}]}
            controls: {idempotent: true}
  - id: stall.thing.install
    action: install
    target_resource_type: stall.thing
    editable: true
    requires:
      - {id: store, capability: stall.store, strategy: create, constraints: {environment: "${intent.environment}"}}
      - {id: host, capability: linux.host, strategy: existing, constraints: {name: "${intent.host}", environment: "${intent.environment}"}}
    plan:
      nodes:
        - id: first
          type: job
          title: First, not idempotent
          requires: [host]
          job:
            run: {runner: ssh, target: host, script: '` + stallJob("first", "10") + `'}
            outputs: {evidence: [{name: first-done, type: ssh_command, target: host, script: 'test -f /root/first.done'}]}
            controls:
              idempotent: false
              rollback: {strategy: compensate, compensation: {runner: ssh, target: host, script: 'echo "undo first" >> /root/stall.record; rm -f /root/first.done'}, evidence: [{name: first-undone, type: ssh_command, target: host, script: 'test ! -f /root/first.done'}]}
        - id: approve
          type: gate
          title: Approve
          after: [first]
          gate: {type: approval, reason: Go on, required_roles: [sre], approvals: 1}
        - id: use-store
          type: job
          title: Uses the store, not idempotent
          after: [approve]
          requires: [store, host]
          job:
            run: {runner: ssh, target: host, script: '` + stallJob("use", "1") + `'}
            outputs: {evidence: [{name: use-done, type: ssh_command, target: host, script: 'test -f /root/use.done'}]}
            controls:
              idempotent: false
              rollback: {strategy: compensate, compensation: {runner: ssh, target: host, script: 'echo "undo use" >> /root/stall.record; rm -f /root/use.done'}, evidence: [{name: use-undone, type: ssh_command, target: host, script: 'test ! -f /root/use.done'}]}
`

// stallLease is the stall sweep's lease term: a takeover within seconds.
const stallLease = 3 * time.Second

// stallWorld is what every stall run shares: a Neo4j, a test host and
// the pack.
type stallWorld struct {
	db    *neo4jtest.Server
	hosts *testhosts.Hosts
	packs string
}

// stallPoint is where a run stalls its first replica: after its commit
// n (counted by the crash points), or, with job set, while the first
// non-idempotent job runs on the host; none when both are zero.
type stallPoint struct {
	commit int
	job    bool
}

func (p stallPoint) String() string {
	if p.job {
		return "during-a-job"
	}
	return "commit-" + pointName(p.commit)
}

// stallClient answers within a few seconds: a replica stopped in the
// middle of a request must not hold the driver.
var stallClient = &http.Client{Timeout: 5 * time.Second}

func stallPost(p *proc, bearer, query string, vars map[string]any) (map[string]any, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, p.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+bearer)
	out, err := sendGQLWith(stallClient, req)
	if err != nil {
		return nil, err
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("%v", out.Errors)
	}
	return out.Data, nil
}

// stopped reports whether the process is stopped (SIGSTOP).
func stopped(p *proc) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(data), ") ")
	return ok && strings.HasPrefix(rest, "T")
}

// hostFile is a file in the test host's /root.
func (w *stallWorld) hostFile(name string) string {
	return filepath.Join(w.hosts.Hosts[0].Root, "root", name)
}

// run drives the stall pack's operation to its end on replica a (with
// the stall point), and on replica b, started once a is stalled; a is
// continued once b holds every shard. It returns how many commits a made
// (all of them when it never stalled) and whether it stalled.
func (w *stallWorld) run(t *testing.T, at stallPoint) (commits int, stalled bool) {
	for _, f := range []string{"stall.record", "stall.lock", "first.started", "first.done", "use.started", "use.done"} {
		_ = os.Remove(w.hostFile(f))
	}
	dir := t.TempDir()
	org := fmt.Sprintf("stall-%d", time.Now().UnixNano())
	tokens := filepath.Join(dir, "tokens.yaml")
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf("tokens:\n  - {token: %q, actor: alice, organization: %s, roles: [admin]}\n  - {token: %q, actor: bob, organization: %s, roles: [sre]}\n",
		token, org, sweepSRE, org)), 0o600))
	args := []string{"--store", "neo4j", "--neo4j-uri", w.db.URI, "--executor-lease", stallLease.String(), "--tokens", tokens,
		"--packs", w.packs, "--egress-allow", "10.0.0.0/8"}
	setting := "0"
	if at.commit != 0 {
		setting = crashSetting(at.commit)
	}
	a := launchWith(t, func(cmd *exec.Cmd) {
		cmd.Path = crashBin(t)
		cmd.Env = append(cmd.Env, "CAPSTAN_CRASH_AT_COMMIT="+setting, "CAPSTAN_CRASH_SIGNAL=STOP")
	}, filepath.Join(dir, "a"), args...)
	a.waitReady(t, 90*time.Second)
	a.gql(t, `mutation($v: String!) { putSecret(input: {name: "test-hosts-key", value: $v}) { name } }`, map[string]any{"v": string(w.hosts.ClientKey)})
	a.gql(t, `mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": w.hosts.Catalog(org, "stall", "test-hosts-key")})
	in := a.gql(t, `mutation($h: String!) { createIntent(input: {action: "install", targetResourceType: "stall.thing", mode: ADVANCED, desiredResult: {name: "stalled"},
	  constraints: {environment: "stall", host: $h}}) { id } }`, map[string]any{"h": w.hosts.Hosts[0].Name})["createIntent"].(map[string]any)["id"]
	plan := a.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": in})["planIntent"].(map[string]any)
	require.Equal(t, "READY", plan["status"], "%v", plan["problems"])

	via := a // the replica the people use
	var b *proc
	continued := false
	// a goes on, learns that its shards went, and stops: it would rejoin
	// and take half the shards back, and b's hand-over would interrupt
	// b's jobs (legitimately, but the record could not tell whose).
	resume := func() {
		continued = true
		require.NoError(t, a.cmd.Process.Signal(syscall.SIGCONT))
		require.Eventually(t, func() bool { // whichever it learns first
			out := a.output()
			return strings.Contains(out, "another executor holds this shard now") || strings.Contains(out, "a write was refused") ||
				strings.Contains(out, "leases run out before they can be renewed")
		}, 30*time.Second, 20*time.Millisecond, "the stalled replica learns that its shards went")
		a.stop(t)
	}
	takeOver := func() {
		t.Logf("%s: replica a stalled; b takes over", at)
		b = start(t, filepath.Join(dir, "b"), args...)
		via = b
		require.Eventually(t, func() bool { return len(shards(t, b)) == shard.Shards }, 60*time.Second, 50*time.Millisecond,
			"b takes every shard once a's leases ran out")
		w.mark(t, "takeover")
		stalled = true
		if !at.job { // a stall during a job lasts until the operation ended: the job must not run on beside b
			resume()
		}
	}
	var op string
	intervened := map[string]bool{} // the jobs people did by hand
	deadline := time.Now().Add(3 * time.Minute)
	for {
		require.True(t, time.Now().Before(deadline), "the operation did not end (%s)\na:\n%s", at, lastLines(a.output(), 40))
		if !stalled && (stopped(a) || at.job && fileExists(w.hostFile("first.started"))) {
			if at.job {
				require.NoError(t, a.cmd.Process.Signal(syscall.SIGSTOP))
			}
			takeOver()
		}
		if op == "" {
			got, err := stallPost(via, token, `mutation($p: ID!) { startOperation(input: {plan: $p, idempotencyKey: "stall"}) { id } }`, map[string]any{"p": plan["id"]})
			if err == nil {
				op = got["startOperation"].(map[string]any)["id"].(string)
			}
			continue
		}
		got, err := stallPost(via, token, `query($id: ID!) { operation(id: $id) { status patches { status } nodeRuns { node status error childOperation { id } } } }`, map[string]any{"id": op})
		if err != nil {
			continue
		}
		o := got["operation"].(map[string]any)
		if s := o["status"]; s == "SUCCEEDED" || s == "FAILED" || s == "CANCELLED" || s == "ROLLED_BACK" {
			if at != (stallPoint{}) && !stalled {
				continue // the stall point comes with the end's commit
			}
			require.Equal(t, "ROLLED_BACK", s, "%v", o["nodeRuns"])
			break
		}
		w.act(t, via, op, o, intervened)
	}
	if stalled && !continued {
		resume()
	}
	// A job the deposed replica left running would append to the record
	// when it ends: the record is read once no job runs on the host.
	require.Eventually(t, func() bool { return !hostJobRunning() }, 30*time.Second, 50*time.Millisecond, "a job still runs on the host")
	w.checkRecord(t, intervened)
	commits = len(commitLine.FindAllString(a.output(), -1))
	if b != nil {
		b.stop(t)
	}
	if !continued {
		a.stop(t) // gives its leases back: the next run starts on a free database
	}
	return commits, stalled
}

// hostJobRunning reports whether a stall job's shell runs on the test
// host (its processes are this machine's, in a PID namespace of its own).
func hostJobRunning() bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), "/root/stall.record") {
			return true
		}
	}
	return false
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// act is what people do as the operation runs: propose the patch while
// the gate waits, then approve it; a non-idempotent job a stall left
// unproven is done by hand on the host and recorded.
func (w *stallWorld) act(t *testing.T, via *proc, op string, o map[string]any, intervened map[string]bool) {
	runs := runsOf(o)
	if runs["approve"]["status"] == "WAITING_APPROVAL" {
		if len(o["patches"].([]any)) == 0 {
			_, _ = stallPost(via, token, `mutation($op: ID!) { proposePlanPatch(input: {operation: $op, baseRevision: 1, reason: "break it",
			  changes: [{op: INSERT_AFTER, node: "use-store", template: "break"}]}) { status } }`, map[string]any{"op": op})
		} else {
			approveGates(via, op, o)
		}
	}
	for node, job := range map[string]string{"first": "first", "use-store": "use"} {
		if runs[node]["status"] == "WAITING_INTERVENTION" {
			intervened[job] = true
			require.NoError(t, os.WriteFile(w.hostFile(job+".done"), nil, 0o644))
			_, _ = stallPost(via, token, `mutation($op: ID!, $n: String!) { recordIntervention(input: {operation: $op, node: $n, note: "did it by hand after the stall"}) { type } }`,
				map[string]any{"op": op, "n": node})
		}
	}
	time.Sleep(20 * time.Millisecond) // the next poll
}

// mark appends a line of the test's own to the host's record.
func (w *stallWorld) mark(t *testing.T, line string) {
	f, err := os.OpenFile(w.hostFile("stall.record"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString(line + "\n")
	require.NoError(t, err)
}

// checkRecord holds the host's own record to "each attempt ran once, on
// one replica": no attempt started twice; no two attempts ran at once;
// neither non-idempotent job started more than once; and after b took
// over, nothing of a's: no attempt begun before the takeover ended after
// it (its job ran on beside b), and no job that people did by hand
// (which b therefore never ran) started (a's queued launch).
func (w *stallWorld) checkRecord(t *testing.T, intervened map[string]bool) {
	data, err := os.ReadFile(w.hostFile("stall.record"))
	require.NoError(t, err)
	record := string(data)
	require.NotContains(t, record, "overlap", "two attempts ran on the host at once:\n%s", record)
	before := map[string]bool{} // attempts begun before the takeover
	seen := map[string]bool{}
	starts := map[string]int{}
	took := false
	for _, line := range strings.Split(strings.TrimSpace(record), "\n") {
		if line == "takeover" {
			took = true
			continue
		}
		if rest, ok := strings.CutPrefix(line, "start "); ok {
			require.False(t, seen[rest], "an attempt ran twice:\n%s", record)
			seen[rest] = true
			job := strings.Fields(rest)[0]
			starts[job]++
			if !took {
				before[rest] = true
			}
			require.False(t, took && intervened[job], "%s started after the takeover, though b never ran it (people did it by hand): the deposed replica's launch:\n%s", job, record)
		}
		if rest, ok := strings.CutPrefix(line, "end "); ok && took {
			require.False(t, before[rest], "an attempt begun before the takeover ended after it: it ran on beside the new owner:\n%s", record)
		}
	}
	for _, job := range []string{"first", "use"} {
		require.LessOrEqual(t, starts[job], 1, "the non-idempotent %s started more than once:\n%s", job, record)
	}
}

// TestStallAtEveryCommit is the crash sweep with SIGSTOP instead of
// SIGKILL, on two real replicas of one real Neo4j, the jobs on a real
// sshd host: replica a stops right after its commit n (or while the first
// job runs on the host); replica b starts, takes every shard once a's
// leases ran out, and drives the operation on; a is continued then (at
// once, or after the operation's end when it stalled during a job), and
// stops once it learnt that its shards went. The
// host's own record shows no attempt ran twice, at once or one after the
// other, and each non-idempotent job at most once. Every commit with
// CAPSTAN_CRASH_SWEEP=all (make crash-sweep), a sample in make test.
func TestStallAtEveryCommit(t *testing.T) {
	t.Parallel()
	db, err := neo4jtest.Start(context.Background())
	require.NoError(t, err, "Neo4j is part of the test suite")
	t.Cleanup(func() { db.Close() })
	w := &stallWorld{db: db, hosts: testhosts.Start(t, 1), packs: t.TempDir()}
	require.NoError(t, os.WriteFile(filepath.Join(w.packs, "stall.yaml"), []byte(stallPack), 0o600))

	whole, _ := w.run(t, stallPoint{})
	require.Greater(t, whole, 10, "the uninterrupted run's commits")
	t.Logf("an uninterrupted run makes %d commits", whole)
	// make test: during a job, at the first job's start (its launch
	// queued behind the commit) and at the operation's end.
	points := []stallPoint{{job: true}, {commit: 2}, {commit: crashAtEnd}}
	if os.Getenv("CAPSTAN_CRASH_SWEEP") == "all" {
		points = []stallPoint{{job: true}}
		for _, n := range sweepPoints(whole, 0) {
			points = append(points, stallPoint{commit: n})
		}
	}
	for _, p := range points {
		t.Run(p.String(), func(t *testing.T) {
			_, stalled := w.run(t, p)
			require.True(t, stalled, "the stall point was never reached")
		})
	}
}
