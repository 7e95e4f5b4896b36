package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/server"
)

// statesPack drives every status machine: each scenario of the widget type
// ends one way (success, rollback, cancel, failure).
const statesPack = `id: states
version: 1.0.0
capabilities:
  - {key: widget.api, category: test}
resource_types:
  - {key: widget, display_name: Widget, allowed_actions: [create, upgrade, repair, delete]}
  - {key: sprocket, display_name: Sprocket, allowed_actions: [create, delete]}
scenarios:
  - id: widget.create
    action: create
    target_resource_type: widget
    provides: [{capability: widget.api}]
    plan:
      nodes:
        - id: approve
          type: gate
          title: Approve
          gate: {type: approval, reason: A new widget., required_roles: [sre], approvals: 1}
        - id: build
          type: job
          title: Build (fails once, then works)
          after: [approve]
          job:
            run: {runner: sim, outcomes: [fail_retryable, succeed]}
            outputs: {evidence: [{name: built, type: sim}]}
            controls: {retry: {maximum_attempts: 2, initial_interval: 10ms}}
        - id: check
          type: manual_intervention
          title: Check by hand
          after: [build]
          intervention: {instructions: Look at it., verification: [{name: looked, type: sim}]}
        - id: verify
          type: verification
          title: Verify
          after: [check]
          probes: [{name: up, type: sim}]
  - id: widget.upgrade
    action: upgrade
    target_resource_type: widget
    plan:
      nodes:
        - id: step-one
          type: job
          title: Step one (compensated)
          job:
            run: {runner: sim}
            outputs: {evidence: [{name: one, type: sim}]}
            controls:
              rollback: {strategy: compensate, compensation: {runner: sim}, evidence: [{name: undone, type: sim}]}
        - id: step-two
          type: job
          title: Step two (fails)
          after: [step-one]
          job:
            run: {runner: sim, outcomes: [fail]}
            outputs: {evidence: [{name: two, type: sim}]}
            controls: {retry: {maximum_attempts: 1, on_exhausted: fail}}
  - id: widget.repair
    action: repair
    target_resource_type: widget
    plan:
      nodes:
        - id: approve-repair
          type: gate
          title: Approve the repair
          gate: {type: approval, reason: A repair., required_roles: [sre], approvals: 1}
        - id: fix
          type: job
          title: Fix (fails, leaving it degraded)
          after: [approve-repair]
          job:
            run: {runner: sim, outcomes: [fail]}
            outputs: {evidence: [{name: fixed, type: sim}]}
            controls: {retry: {maximum_attempts: 1, on_exhausted: fail}}
  - id: widget.delete
    action: delete
    target_resource_type: widget
    plan:
      nodes:
        - id: remove
          type: job
          title: Remove
          job:
            run: {runner: sim}
            outputs: {evidence: [{name: removed, type: sim}]}
  - id: sprocket.create
    action: create
    target_resource_type: sprocket
    plan:
      nodes:
        - id: forge
          type: job
          title: Forge (fails)
          job:
            run: {runner: sim, outcomes: [fail]}
            outputs: {evidence: [{name: forged, type: sim}]}
            controls: {retry: {maximum_attempts: 1, on_exhausted: fail}}
  - id: gadget.install
    action: install
    target_resource_type: gadget
    requires:
      - {id: api, capability: widget.api, strategy: existing, constraints: {name: nowhere}}
    plan:
      nodes:
        - {id: noop, type: verification, title: Nothing, probes: [{name: nothing, type: sim}]}
`

const (
	statesAdmin = "states-admin-0123456789"
	statesSRE   = "states-sre-0123456789"
)

// statesEnv is a real server (HTTP, executor, embedded store) for the
// status machine tests; everything they do goes through GraphQL.
type statesEnv struct {
	t  *testing.T
	ts *httptest.Server
	// seen collects, per machine, every status observed through the API:
	// in query answers and in timeline events.
	seen map[string]map[string]bool
}

func startStates(t *testing.T) *statesEnv {
	t.Helper()
	store := testenv.Store(t)
	svc := testenv.Demo(t, store)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ex := executor.New(executor.Config{Store: store, Dir: t.TempDir(), JobDir: t.TempDir(), Log: log, Hooks: svc,
		Runners: map[string]job.Runner{"sim": local.SimRunner{Instant: true}}})
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, ex.Start(ctx))
	testenv.Wakes(svc).Listen(ex.Wake)
	tokens, err := server.NewTokens([]server.Token{
		{Token: statesAdmin, Actor: "alice", Organization: testenv.Org, Roles: []string{capstan.RoleAdmin}},
		{Token: statesSRE, Actor: "bob", Organization: testenv.Org, Roles: []string{capstan.RoleSRE}},
	})
	require.NoError(t, err)
	ts := httptest.NewServer(server.Handler(server.Config{Service: svc, Tokens: tokens, Log: log}))
	t.Cleanup(func() { ts.Close(); cancel(); ex.Stop() })
	e := &statesEnv{t: t, ts: ts, seen: map[string]map[string]bool{}}
	r := e.gql(statesAdmin, `mutation($y: String!) { installScenarioPack(input: {document: $y}) { id } }`, map[string]any{"y": statesPack})
	require.Empty(t, r.Errors, "%v", r.Errors)
	return e
}

func (e *statesEnv) gql(token, q string, vars map[string]any) gqlResponse {
	e.t.Helper()
	return post(e.t, e.ts, token, q, vars)
}

func (e *statesEnv) see(machine string, status any) {
	if s, ok := status.(string); ok && s != "" {
		if e.seen[machine] == nil {
			e.seen[machine] = map[string]bool{}
		}
		e.seen[machine][s] = true
	}
}

// intent creates and plans an intent for action on typ/name; it returns
// the intent and plan ids.
func (e *statesEnv) intent(action, typ, name string) (string, string) {
	e.t.Helper()
	id, _ := e.intentOnly(action, typ, name)
	plan := e.gql(statesAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status intent { status } } }`, map[string]any{"id": id})
	require.Empty(e.t, plan.Errors, "%v", plan.Errors)
	e.see("plan", get(plan.Data, "planIntent", "status"))
	e.see("intent", get(plan.Data, "planIntent", "intent", "status"))
	return id, get(plan.Data, "planIntent", "id").(string)
}

// intentOnly creates an intent for action on typ/name and returns its id
// and status.
func (e *statesEnv) intentOnly(action, typ, name string) (string, string) {
	e.t.Helper()
	in := e.gql(statesAdmin, `mutation($a: String!, $t: String!, $n: String!) { createIntent(input: {action: $a, targetResourceType: $t, desiredResult: {name: $n}, constraints: {environment: "dev"}}) { id status } }`,
		map[string]any{"a": action, "t": typ, "n": name})
	require.Empty(e.t, in.Errors, "%v", in.Errors)
	e.see("intent", get(in.Data, "createIntent", "status"))
	return get(in.Data, "createIntent", "id").(string), get(in.Data, "createIntent", "status").(string)
}

func (e *statesEnv) start(plan string) string {
	e.t.Helper()
	r := e.gql(statesAdmin, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id status } }`, map[string]any{"p": plan})
	require.Empty(e.t, r.Errors, "%v", r.Errors)
	e.see("operation", get(r.Data, "startOperation", "status"))
	return get(r.Data, "startOperation", "id").(string)
}

const opStateQuery = `query($id: ID!) { operation(id: $id) { status currentNodes
  intent { status } plan { status summary { status progress currentPhase needsAttention } }
  resource { lifecycleStatus healthStatus activeOperation { id } lastOperation { id } }
  nodeRuns { node status attempts } gates { node status }
  progress { status currentPhase progress resourceLifecycle resourceHealth }
  timeline(first: 500) { edges { node { type payload } } } } }`

// state reads the operation through GraphQL and records every status it
// shows, in its records and in its timeline.
func (e *statesEnv) state(op string) map[string]any {
	e.t.Helper()
	r := e.gql(statesAdmin, opStateQuery, map[string]any{"id": op})
	require.Empty(e.t, r.Errors, "%v", r.Errors)
	o := get(r.Data, "operation").(map[string]any)
	e.see("operation", o["status"])
	e.see("intent", get(o, "intent", "status"))
	e.see("plan", get(o, "plan", "status"))
	if res, ok := o["resource"].(map[string]any); ok {
		e.see("lifecycle", res["lifecycleStatus"])
		e.see("health", res["healthStatus"])
	}
	for _, n := range o["nodeRuns"].([]any) {
		e.see("node", get(n, "status"))
	}
	for _, edge := range get(o, "timeline", "edges").([]any) {
		typ := get(edge, "node", "type").(string)
		payload, _ := get(edge, "node", "payload").(map[string]any)
		if s, ok := strings.CutPrefix(typ, "operation."); ok {
			e.see("operation", strings.ToUpper(s))
		}
		if s, ok := nodeStatusOfEvent[typ]; ok {
			e.see("node", s)
		}
		if typ == "resource.changing" || typ == "resource.concluded" {
			e.see("lifecycle", strings.ToUpper(payload["lifecycle"].(string)))
		}
	}
	return o
}

// nodeStatusOfEvent is the node run status each timeline event records.
var nodeStatusOfEvent = map[string]string{
	"node.running": "RUNNING", "node.succeeded": "SUCCEEDED", "node.recovered": "SUCCEEDED", "node.failed": "FAILED",
	"node.retrying": "RETRYING", "node.needs_attention": "WAITING_INTERVENTION", "node.cancelled": "CANCELLED",
	"node.rolled_back": "ROLLED_BACK", "gate.waiting": "WAITING_APPROVAL", "intervention.recorded": "VERIFYING",
}

func (e *statesEnv) waitFor(op string, cond func(o map[string]any) bool) map[string]any {
	e.t.Helper()
	var o map[string]any
	require.Eventually(e.t, func() bool { o = e.state(op); return cond(o) }, 20*time.Second, 10*time.Millisecond)
	return o
}

func statusIs(want ...string) func(o map[string]any) bool {
	return func(o map[string]any) bool {
		for _, w := range want {
			if o["status"] == w {
				return true
			}
		}
		return false
	}
}

func (e *statesEnv) decide(op, node string, approve bool) map[string]any {
	e.t.Helper()
	r := e.gql(statesSRE, `mutation($o: ID!, $n: String!, $a: Boolean!) { decideGate(input: {operation: $o, node: $n, approve: $a}) { status } }`,
		map[string]any{"o": op, "n": node, "a": approve})
	require.Empty(e.t, r.Errors, "%v", r.Errors)
	return r.Data
}

// TestEveryStatusMachineReachesEveryState drives intents, plans,
// operations, node runs and the resource's lifecycle and health through
// every state over GraphQL — success, rollback, cancel and failure — and
// checks the final intent, plan, operation and resource of each.
func TestEveryStatusMachineReachesEveryState(t *testing.T) {
	e := startStates(t)

	// Create, cancelled at its first gate before any work: the intent and
	// plan are cancelled, the resource it was to create stays planned.
	_, plan := e.intent("create", "widget", "w1")
	op := e.start(plan)
	o := e.waitFor(op, statusIs("WAITING"))
	require.Equal(t, []any{"approve"}, o["currentNodes"])
	require.Equal(t, "EXECUTING", get(o, "intent", "status"))
	require.Equal(t, "RUNNING", get(o, "plan", "status"))
	require.Equal(t, "PROVISIONING", get(o, "resource", "lifecycleStatus"))
	require.Equal(t, op, get(o, "resource", "activeOperation", "id"))
	r := e.gql(statesAdmin, `mutation($o: ID!) { cancelOperation(input: {operation: $o, reason: "not now"}) { status } }`, map[string]any{"o": op})
	require.Empty(t, r.Errors, "%v", r.Errors)
	e.see("operation", get(r.Data, "cancelOperation", "status"))
	o = e.waitFor(op, statusIs("CANCELLED"))
	requireEnd(t, o, "CANCELLED", "CANCELLED", "PLANNED", "UNKNOWN")
	require.Equal(t, op, get(o, "resource", "lastOperation", "id"))
	require.Nil(t, get(o, "resource", "activeOperation"))
	require.Equal(t, []any{}, o["currentNodes"])

	// Create again: the planned widget is provisioned; the job fails once
	// and is retried, a person checks it, the operation succeeds.
	_, plan = e.intent("create", "widget", "w1")
	op = e.start(plan)
	e.waitFor(op, statusIs("WAITING"))
	require.Equal(t, "APPROVED", get(e.decide(op, "approve", true), "decideGate", "status"))
	// The check node is current once it starts; the operation waits
	// for a person from the next commit on.
	o = e.waitFor(op, func(o map[string]any) bool {
		return len(o["currentNodes"].([]any)) == 1 && o["currentNodes"].([]any)[0] == "check" && o["status"] == "WAITING"
	})
	require.Equal(t, "Check by hand", get(o, "plan", "summary", "currentPhase"), "a running plan's summary is its operation's")
	require.Equal(t, 0.5, get(o, "plan", "summary", "progress"), "approve and build done, check and verify to go")
	require.Len(t, get(o, "plan", "summary", "needsAttention"), 1)
	r = e.gql(statesAdmin, `mutation($o: ID!) { recordIntervention(input: {operation: $o, node: "check", note: "looked"}) { id } }`, map[string]any{"o": op})
	require.Empty(t, r.Errors, "%v", r.Errors)
	o = e.waitFor(op, statusIs("SUCCEEDED"))
	requireEnd(t, o, "COMPLETED", "COMPLETED", "ACTIVE", "HEALTHY")
	require.Equal(t, 1.0, get(o, "progress", "progress"))
	require.Equal(t, "COMPLETED", get(o, "plan", "summary", "status"), "the plan's summary follows the operation")
	require.Equal(t, 1.0, get(o, "plan", "summary", "progress"))
	require.Equal(t, "succeeded", get(o, "plan", "summary", "currentPhase"))
	require.Empty(t, get(o, "plan", "summary", "needsAttention"), "nothing needs anyone after the end")
	runs := nodeRunsOf(o)
	require.Equal(t, 2.0, runs["build"]["attempts"], "failed once, retried")

	// Upgrade: the second step fails, the first is compensated, the
	// operation rolls back and the widget is active again, health unknown.
	_, plan = e.intent("upgrade", "widget", "w1")
	op = e.start(plan)
	o = e.waitFor(op, statusIs("ROLLED_BACK"))
	requireEnd(t, o, "FAILED", "FAILED", "ACTIVE", "UNKNOWN")
	require.Equal(t, "ROLLED_BACK", nodeRunsOf(o)["step-one"]["status"])

	// Repair: approved, its job fails: the widget is left degraded.
	_, plan = e.intent("repair", "widget", "w1")
	op = e.start(plan)
	e.waitFor(op, statusIs("WAITING"))
	e.decide(op, "approve-repair", true)
	o = e.waitFor(op, statusIs("FAILED"))
	requireEnd(t, o, "FAILED", "FAILED", "DEGRADED", "DEGRADED")

	// Repair of a degraded widget, rejected at its gate: nothing changed,
	// it is still degraded (and can be repaired again).
	_, plan = e.intent("repair", "widget", "w1")
	op = e.start(plan)
	e.waitFor(op, statusIs("WAITING"))
	e.decide(op, "approve-repair", false)
	o = e.waitFor(op, statusIs("FAILED"))
	requireEnd(t, o, "FAILED", "FAILED", "DEGRADED", "DEGRADED")
	require.Equal(t, "REJECTED", gatesOf(o)["approve-repair"])

	// Delete: the widget is deleted; a create brings it back.
	_, plan = e.intent("delete", "widget", "w1")
	op = e.start(plan)
	o = e.waitFor(op, statusIs("SUCCEEDED"))
	requireEnd(t, o, "COMPLETED", "COMPLETED", "DELETED", "UNKNOWN")
	_, plan = e.intent("create", "widget", "w1")
	op = e.start(plan)
	e.waitFor(op, statusIs("WAITING"))
	e.decide(op, "approve", true)
	e.waitFor(op, func(o map[string]any) bool {
		return len(o["currentNodes"].([]any)) == 1 && o["currentNodes"].([]any)[0] == "check"
	})
	e.gql(statesAdmin, `mutation($o: ID!) { recordIntervention(input: {operation: $o, node: "check", note: "looked"}) { id } }`, map[string]any{"o": op})
	o = e.waitFor(op, statusIs("SUCCEEDED"))
	requireEnd(t, o, "COMPLETED", "COMPLETED", "ACTIVE", "HEALTHY")

	// A create whose work failed leaves a failed, unhealthy resource.
	_, plan = e.intent("create", "sprocket", "s1")
	op = e.start(plan)
	o = e.waitFor(op, statusIs("FAILED"))
	requireEnd(t, o, "FAILED", "FAILED", "FAILED", "UNHEALTHY")

	// An action the resource type does not allow is refused at planning.
	in, _ := e.intentOnly("upgrade", "sprocket", "s1")
	refused := e.gql(statesAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": in})
	require.Equal(t, "INVALID", refused.code())
	require.Contains(t, refused.Errors[0].Message, "does not allow upgrade")

	// A plan that cannot be resolved is invalid; planning the intent again
	// supersedes it.
	in, plan = e.intent("install", "gadget", "g1")
	p := e.gql(statesAdmin, `query($id: ID!) { plan(id: $id) { status } }`, map[string]any{"id": plan})
	require.Equal(t, "INVALID", get(p.Data, "plan", "status"))
	again := e.gql(statesAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": in})
	require.Empty(t, again.Errors, "%v", again.Errors)
	p = e.gql(statesAdmin, `query($id: ID!) { plan(id: $id) { status } }`, map[string]any{"id": plan})
	e.see("plan", get(p.Data, "plan", "status"))
	require.Equal(t, "SUPERSEDED", get(p.Data, "plan", "status"))

	// Every state each machine can reach through the API. Not here, each
	// for its reason: intent DRAFT (createIntent submits at once); plan
	// DRAFT, RESOLVING (inside one planIntent call) and APPROVED (no
	// policy asks for plan approval yet); node PENDING and READY (a step
	// moves a node through them within one commit) and SKIPPED (only a
	// PlanPatch skips); health DRIFTED (no drift detection yet); resource
	// DELETING and REPAIRING are seen as the changing status of their
	// operations.
	want := map[string][]string{
		"intent":    {"SUBMITTED", "PLANNED", "EXECUTING", "COMPLETED", "FAILED", "CANCELLED"},
		"plan":      {"READY", "INVALID", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "SUPERSEDED"},
		"operation": {"PENDING", "RUNNING", "WAITING", "SUCCEEDED", "FAILED", "CANCELLING", "CANCELLED", "ROLLING_BACK", "ROLLED_BACK"},
		"node":      {"RUNNING", "VERIFYING", "SUCCEEDED", "FAILED", "RETRYING", "WAITING_APPROVAL", "WAITING_INTERVENTION", "CANCELLED", "ROLLED_BACK"},
		"lifecycle": {"PLANNED", "PROVISIONING", "ACTIVE", "UPDATING", "DEGRADED", "REPAIRING", "DELETING", "DELETED", "FAILED"},
		"health":    {"UNKNOWN", "HEALTHY", "DEGRADED", "UNHEALTHY"},
	}
	for machine, states := range want {
		var missing []string
		for _, s := range states {
			if !e.seen[machine][s] {
				missing = append(missing, s)
			}
		}
		sort.Strings(missing)
		require.Empty(t, missing, "%s states never reached through the API (seen %v)", machine, e.seen[machine])
	}
}

// requireEnd checks the final intent, plan, resource and health of an
// operation that ended.
func requireEnd(t *testing.T, o map[string]any, intent, plan, lifecycle, health string) {
	t.Helper()
	require.Equal(t, intent, get(o, "intent", "status"), "intent")
	require.Equal(t, plan, get(o, "plan", "status"), "plan")
	require.Equal(t, lifecycle, get(o, "resource", "lifecycleStatus"), "resource lifecycle")
	require.Equal(t, health, get(o, "resource", "healthStatus"), "resource health")
	require.Equal(t, o["status"], get(o, "progress", "status"), "the simple-mode projection follows the operation")
	require.Equal(t, lifecycle, get(o, "progress", "resourceLifecycle"))
}

func nodeRunsOf(o map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, n := range o["nodeRuns"].([]any) {
		out[get(n, "node").(string)] = n.(map[string]any)
	}
	return out
}

func gatesOf(o map[string]any) map[string]any {
	out := map[string]any{}
	for _, g := range o["gates"].([]any) {
		out[get(g, "node").(string)] = get(g, "status")
	}
	return out
}

// TestRepairBindsTheDegradedResourceItRepairs: a repair's requirement
// accepts a degraded provider (that is what a repair is for), so the demo
// catalog's degraded legacy-k8s can be repaired; an install still binds
// only active clusters and says why the degraded one was rejected.
func TestRepairBindsTheDegradedResourceItRepairs(t *testing.T) {
	e := startStates(t)
	in := e.gql(statesAdmin, `mutation { createIntent(input: {action: "repair", targetResourceType: "kubernetes.cluster",
	  desiredResult: {name: "legacy-k8s"}, constraints: {environment: "prod", cluster: "legacy-k8s"}}) { id } }`, nil)
	require.Empty(t, in.Errors, "%v", in.Errors)
	plan := e.gql(statesAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { status problems
	  bindings { key status provider { resourceKey } candidates { ref accepted reason } requirement { lifecycles } } } }`,
		map[string]any{"id": get(in.Data, "createIntent", "id")})
	require.Empty(t, plan.Errors, "%v", plan.Errors)
	require.Equal(t, "READY", get(plan.Data, "planIntent", "status"), "%v", get(plan.Data, "planIntent", "problems"))
	cluster := get(plan.Data, "planIntent", "bindings", 0).(map[string]any)
	require.Equal(t, "cluster", cluster["key"])
	require.Equal(t, "RESOLVED", cluster["status"])
	require.Equal(t, "kubernetes.cluster/legacy-k8s", get(cluster, "provider", "resourceKey"))
	require.Equal(t, []any{"ACTIVE", "DEGRADED", "FAILED"}, get(cluster, "requirement", "lifecycles"))

	// A tempo install on the degraded cluster: its cluster requirement
	// takes active clusters only, and the plan says why not this one.
	in = e.gql(statesAdmin, `mutation { createIntent(input: {action: "install", targetResourceType: "tempo.instance", scenario: "tempo.install@1.3.0",
	  desiredResult: {name: "t-legacy"}, constraints: {environment: "prod", cluster: "legacy-k8s"}}) { id } }`, nil)
	require.Empty(t, in.Errors, "%v", in.Errors)
	plan = e.gql(statesAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { status problems bindings { key candidates { ref accepted reason } } } }`,
		map[string]any{"id": get(in.Data, "createIntent", "id")})
	require.Empty(t, plan.Errors, "%v", plan.Errors)
	require.Equal(t, "INVALID", get(plan.Data, "planIntent", "status"))
	require.Contains(t, fmt.Sprint(get(plan.Data, "planIntent", "bindings")), "lifecycle: want active, got degraded")
}
