package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/gqlws"
	"github.com/capstan-dev/capstan/internal/testhosts"
)

const (
	driftAdmin    = "drift-admin-token-0123456789"
	driftOperator = "drift-operator-token-0123456789"
	driftViewer   = "drift-viewer-token-0123456789"
)

// TestDriftFoundAndRepairedOnRealHosts is the drift story on both stores,
// against real sshd hosts: linux-service installed on two hosts is found
// healthy by the schedule; a hand edit of one host's config is found
// DRIFTED with the diff (desired and observed checksum) and failed
// evidence saying where; the repair is a plan a person starts, and after
// it the host is healthy again with the file restored. A stopped process
// is drift too; a host whose sshd is gone is UNREACHABLE; pausing the
// schedule needs a note, and a viewer may neither assess nor pause.
func TestDriftFoundAndRepairedOnRealHosts(t *testing.T) {
	t.Parallel()
	hosts := testhosts.Start(t, 2)
	for store, args := range bothStores(t, "--egress-allow", "10.0.0.0/8", "--assess-every", "1s") {
		t.Run(store, func(t *testing.T) {
			dir := t.TempDir()
			tokens := tokensFile(t, dir, "alice acme admin "+driftAdmin, "oscar acme operator "+driftOperator, "victor acme viewer "+driftViewer)
			p := start(t, dir, append([]string{"--tokens", tokens}, args...)...)
			as := func(bearer, q string, vars map[string]any) gqlReply { return postAs(t, p, bearer, q, vars) }
			ok := func(bearer, q string, vars map[string]any) map[string]any {
				t.Helper()
				r := as(bearer, q, vars)
				require.Empty(t, r.Errors, "%v", r.Errors)
				return r.Data
			}
			ok(driftAdmin, `mutation($v: String!) { putSecret(input: {name: "test-hosts-key", value: $v}) { name } }`, map[string]any{"v": string(hosts.ClientKey)})
			env := "lab-" + store
			ok(driftAdmin, `mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": hosts.Catalog("acme", env, "test-hosts-key")})
			drifting, steady := hosts.Hosts[0], hosts.Hosts[1]
			install := map[string]string{}
			for _, h := range hosts.Hosts {
				install[h.Name] = startAs(t, p, driftAdmin, "install", "hello-"+h.Name, h.Name, env)
			}
			for _, h := range hosts.Hosts {
				waitForEndAs(t, p, driftAdmin, install[h.Name])
				require.Equal(t, "SUCCEEDED", statusAs(t, p, driftAdmin, install[h.Name]))
			}
			const resourceQ = `query($k: String!) { resource(key: $k) { id healthStatus observedState
			  assessment { at by health reason since diff { field desired observed } evidence { item result source observedAt } }
			  assessmentPaused { by note } } }`
			resource := func(h testhosts.Host) map[string]any {
				return ok(driftAdmin, resourceQ, map[string]any{"k": "linux.service/hello-" + h.Name})["resource"].(map[string]any)
			}
			assessment := func(h testhosts.Host) map[string]any {
				a, _ := resource(h)["assessment"].(map[string]any)
				return a
			}

			// The schedule finds both healthy, observing on each host.
			for _, h := range hosts.Hosts {
				require.Eventually(t, func() bool {
					a := assessment(h)
					return a != nil && a["health"] == "HEALTHY" && a["by"] == "capstan:assessor"
				}, 60*time.Second, 200*time.Millisecond, "the schedule assesses %s", h.Name)
				a := assessment(h)
				require.Len(t, a["evidence"], 4, "%v", a)
				for _, e := range a["evidence"].([]any) {
					e := e.(map[string]any)
					require.Equal(t, "PASSED", e["result"], "%v", e)
					require.Equal(t, "compute.node/"+h.Name, e["source"].(map[string]any)["host"], "observed on its own host")
					require.Equal(t, h.Address, e["source"].(map[string]any)["address"])
				}
			}

			// A viewer can neither assess nor pause; an operator assesses.
			id := resource(drifting)["id"].(string)
			require.Equal(t, "FORBIDDEN", as(driftViewer, `mutation($r: ID!) { assessResource(input: {resource: $r}) { healthStatus } }`, map[string]any{"r": id}).code())
			require.Equal(t, "FORBIDDEN", as(driftViewer, `mutation($r: ID!) { pauseAssessments(input: {resource: $r, paused: true, note: "maintenance"}) { id } }`, map[string]any{"r": id}).code())
			require.Equal(t, "FORBIDDEN", as(driftOperator, `mutation($r: ID!) { pauseAssessments(input: {resource: $r, paused: true, note: "maintenance"}) { id } }`, map[string]any{"r": id}).code())
			require.Equal(t, "INVALID", as(driftAdmin, `mutation($r: ID!) { pauseAssessments(input: {resource: $r, paused: true}) { id } }`, map[string]any{"r": id}).code(), "a pause says why")

			// A workload that uses the service, waiting at its no_drift gate.
			consumerPack, err := os.ReadFile(filepath.Join("testdata", "drift-consumer.yaml"))
			require.NoError(t, err)
			ok(driftAdmin, `mutation($y: String!) { installScenarioPack(input: {document: $y}) { id } }`, map[string]any{"y": string(consumerPack)})
			cin := ok(driftOperator, `mutation($e: String!, $svc: String!) { createIntent(input: {action: "install", targetResourceType: "test.consumer",
			  desiredResult: {name: "consumer"}, constraints: {environment: $e}, providers: [{requirement: "svc", provider: $svc}], mode: ADVANCED}) { id } }`,
				map[string]any{"e": env, "svc": "linux.service/hello-" + drifting.Name})["createIntent"].(map[string]any)["id"]
			cplan := ok(driftOperator, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": cin})["planIntent"].(map[string]any)
			require.Equal(t, "READY", cplan["status"], "%v", cplan)
			consumer := ok(driftOperator, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": cplan["id"]})["startOperation"].(map[string]any)["id"].(string)
			require.Eventually(t, func() bool { return statusAs(t, p, driftAdmin, consumer) == "WAITING" }, 30*time.Second, 100*time.Millisecond)
			// A live subscriber of the organization's resource health (a dashboard).
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			ws, err := gqlws.Dial(ctx, p.url+"/graphql", driftViewer)
			require.NoError(t, err)
			defer ws.Close()
			ws.Wait = time.Minute
			require.NoError(t, ws.Subscribe("health", `subscription { resourceHealth { key healthStatus assessment { by diff { field } } } }`, nil))

			// A hand edit of the config on the host: drift, with the diff.
			conf := filepath.Join(drifting.Root, "etc", "hello", "hello.conf")
			require.NoError(t, os.WriteFile(conf, []byte("port = 8080\nversion = 1.0.0\ndebug = true\n"), 0o644))
			got := ok(driftOperator, `mutation($r: ID!) { assessResource(input: {resource: $r}) { healthStatus
			  assessment { by health reason diff { field desired observed } evidence { item result source } } } }`, map[string]any{"r": id})["assessResource"].(map[string]any)
			require.Equal(t, "DRIFTED", got["healthStatus"], "%v", got)
			a := got["assessment"].(map[string]any)
			require.Equal(t, "oscar", a["by"])
			require.Contains(t, a["reason"], "config_sha256")
			require.Len(t, a["diff"], 1, "%v", a["diff"])
			d := a["diff"].([]any)[0].(map[string]any)
			require.Equal(t, "config_sha256", d["field"])
			require.Equal(t, "217b4b212d97c7401091aca4a9d24c27506d61ac58b972eb9395fc36b0b50c84", d["desired"])
			require.NotEqual(t, d["desired"], d["observed"])
			require.Len(t, d["observed"], 64, "the checksum observed on the host")
			for _, e := range a["evidence"].([]any) {
				e := e.(map[string]any)
				want := "PASSED"
				if e["item"] == "config" {
					want = "FAILED"
				}
				require.Equal(t, want, e["result"], "%v", e)
			}
			for { // the subscriber sees the drift as it is recorded
				m, err := ws.Next()
				require.NoError(t, err)
				require.Equal(t, "next", m.Type, "%s", m.Payload)
				var ev struct {
					Data struct {
						ResourceHealth struct {
							Key, HealthStatus string
							Assessment        struct {
								By   string
								Diff []struct{ Field string }
							}
						}
					}
				}
				require.NoError(t, json.Unmarshal(m.Payload, &ev))
				if r := ev.Data.ResourceHealth; r.Key == "linux.service/hello-"+drifting.Name && r.HealthStatus == "DRIFTED" {
					require.Equal(t, "config_sha256", r.Assessment.Diff[0].Field)
					break
				}
			}
			require.Equal(t, "HEALTHY", assessment(steady)["health"], "the other host is untouched")
			require.Equal(t, "DRIFTED", assessment(drifting)["health"], "the schedule sees the same drift")

			// The install operation's timeline says when its resource drifted.
			events := ok(driftAdmin, `query($id: ID!) { operation(id: $id) { timeline(first: 200) { edges { node { type actor
			  ... on ResourceEvent { health previousHealth diff { field } } } } } } }`, map[string]any{"id": install[drifting.Name]})
			var assessed []map[string]any
			for _, e := range events["operation"].(map[string]any)["timeline"].(map[string]any)["edges"].([]any) {
				n := e.(map[string]any)["node"].(map[string]any)
				if n["type"] == "resource.assessed" {
					assessed = append(assessed, n)
				}
			}
			require.NotEmpty(t, assessed)
			var drifted map[string]any
			for _, n := range assessed {
				if n["health"] == "DRIFTED" && n["previousHealth"] == "HEALTHY" {
					drifted = n
				}
			}
			require.NotNil(t, drifted, "a resource.assessed event from HEALTHY to DRIFTED: %v", assessed)
			require.Equal(t, []any{map[string]any{"field": "config_sha256"}}, drifted["diff"])

			// The running workload: the drift is under its needs-attention,
			// the assessor proposed a gate before the node that uses the
			// service (a person approves it), and its no_drift gate is not
			// approved while the drift is unresolved.
			needs := ok(driftAdmin, `query($id: ID!) { operation(id: $id) { progress { needsAttention } } }`, map[string]any{"id": consumer})["operation"].(map[string]any)["progress"].(map[string]any)["needsAttention"]
			require.Contains(t, fmt.Sprint(needs), "linux.service/hello-"+drifting.Name+" drifted (config_sha256", "%v", needs)
			var patch map[string]any
			require.Eventually(t, func() bool {
				ps := ok(driftAdmin, `query($id: ID!) { operation(id: $id) { patches { id digest author status changes { op node nodeId } } } }`, map[string]any{"id": consumer})["operation"].(map[string]any)["patches"].([]any)
				for _, x := range ps {
					if x := x.(map[string]any); x["author"] == "capstan:assessor" {
						patch = x
					}
				}
				return patch != nil
			}, 30*time.Second, 100*time.Millisecond, "the assessor proposes a gate on the running operation: %s", logLines(p.output(), "drift"))
			require.Equal(t, "PROPOSED", patch["status"], "a person decides it")
			require.Equal(t, []any{map[string]any{"op": "INSERT_BEFORE", "node": "use", "nodeId": "resolve-drift-use"}}, patch["changes"])
			require.Equal(t, "APPLIED", ok(driftAdmin, `mutation($p: ID!, $d: String!) { decidePlanPatch(input: {patch: $p, approve: true, digest: $d}) { status } }`,
				map[string]any{"p": patch["id"], "d": patch["digest"]})["decidePlanPatch"].(map[string]any)["status"])
			decide := `mutation($o: ID!, $n: String!) { decideGate(input: {operation: $o, node: $n, approve: true}) { status } }`
			refused := as(driftAdmin, decide, map[string]any{"o": consumer, "n": "check"})
			require.Equal(t, "CONFLICT", refused.code(), "%v", refused.Errors)
			require.Contains(t, refused.Errors[0]["message"], "needs no unresolved drift")

			// Repair: a plan a person starts; nothing changes before.
			plan := ok(driftOperator, `mutation($r: ID!) { repairResource(input: {resource: $r}) { id status scenario { id action } intent { action } } }`, map[string]any{"r": id})["repairResource"].(map[string]any)
			require.Equal(t, "READY", plan["status"], "%v", plan)
			require.Equal(t, "repair", plan["scenario"].(map[string]any)["action"])
			body, err := os.ReadFile(conf)
			require.NoError(t, err)
			require.Contains(t, string(body), "debug = true", "planning repairs nothing")
			op := ok(driftOperator, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
			require.Eventually(t, func() bool { return statusAs(t, p, driftAdmin, op) == "WAITING" }, 30*time.Second, 100*time.Millisecond, "the repair waits for its approval")
			body, err = os.ReadFile(conf)
			require.NoError(t, err)
			require.Contains(t, string(body), "debug = true", "nothing is repaired before the approval")
			require.Equal(t, "APPROVED", ok(driftAdmin, `mutation($o: ID!) { decideGate(input: {operation: $o, node: "approve", approve: true}) { status } }`, map[string]any{"o": op})["decideGate"].(map[string]any)["status"])
			waitForEndAs(t, p, driftAdmin, op)
			rep := ok(driftAdmin, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status error } evidence { item result source } } }`, map[string]any{"id": op})["operation"].(map[string]any)
			require.Equal(t, "SUCCEEDED", rep["status"], "%v", rep)
			for _, e := range rep["evidence"].([]any) {
				e := e.(map[string]any)
				require.Equal(t, "PASSED", e["result"], "%v", e)
			}
			body, err = os.ReadFile(conf)
			require.NoError(t, err)
			require.Equal(t, "port = 8080\nversion = 1.0.0\n", string(body), "the config is what the desired state says")
			got = ok(driftOperator, `mutation($r: ID!) { assessResource(input: {resource: $r}) { healthStatus lifecycleStatus desiredState } }`, map[string]any{"r": id})["assessResource"].(map[string]any)
			require.Equal(t, "HEALTHY", got["healthStatus"], "%v", got)
			require.Equal(t, "ACTIVE", got["lifecycleStatus"])
			require.Equal(t, "1.0.0", got["desiredState"].(map[string]any)["version"], "a repair keeps the desired state")
			// Repaired, the gate is approved and the workload goes on.
			require.Equal(t, "APPROVED", ok(driftAdmin, decide, map[string]any{"o": consumer, "n": "check"})["decideGate"].(map[string]any)["status"])
			require.Eventually(t, func() bool {
				r := as(driftAdmin, decide, map[string]any{"o": consumer, "n": "resolve-drift-use"})
				return len(r.Errors) == 0
			}, 30*time.Second, 200*time.Millisecond, "the drift gate the patch added waits, and is approved now that the drift is resolved")
			waitForEndAs(t, p, driftAdmin, consumer)
			require.Equal(t, "SUCCEEDED", statusAs(t, p, driftAdmin, consumer))

			// A stopped process is drift of running.
			// Assessed once it has exited: a process that got the signal
			// and has not ended yet still runs, without its port.
			hosts.Exec(t, 0, "sh", "-c", `pid=$(cat /run/hello.pid); kill "$pid"
			  for i in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.05; done; echo "$pid still runs" >&2; exit 1`)
			got = ok(driftOperator, `mutation($r: ID!) { assessResource(input: {resource: $r}) { healthStatus assessment { diff { field desired observed } } } }`, map[string]any{"r": id})["assessResource"].(map[string]any)
			require.Equal(t, "DRIFTED", got["healthStatus"], "%v", got)
			require.Contains(t, got["assessment"].(map[string]any)["diff"], map[string]any{"field": "running", "desired": true, "observed": false})

			// Paused: the schedule leaves it; an assessment on demand runs.
			sid := resource(steady)["id"].(string)
			paused := ok(driftAdmin, `mutation($r: ID!) { pauseAssessments(input: {resource: $r, paused: true, note: "host maintenance"}) { assessmentPaused { by note } } }`, map[string]any{"r": sid})["pauseAssessments"].(map[string]any)
			require.Equal(t, map[string]any{"by": "alice", "note": "host maintenance"}, paused["assessmentPaused"])
			before := assessment(steady)["at"]
			// Two scheduled rounds pass: each assesses the other host's service.
			rounds, last := 0, assessment(drifting)["at"]
			require.Eventually(t, func() bool {
				if a := assessment(drifting); a["by"] == "capstan:assessor" && a["at"] != last {
					rounds, last = rounds+1, a["at"]
				}
				return rounds >= 2
			}, 30*time.Second, 100*time.Millisecond, "the schedule goes on with the resources not paused")
			require.Equal(t, before, assessment(steady)["at"], "a paused resource is not assessed by the schedule")

			// A host whose sshd is gone cannot be observed: UNREACHABLE.
			hosts.KillSSHD(t, 1)
			got = ok(driftOperator, `mutation($r: ID!) { assessResource(input: {resource: $r}) { healthStatus assessment { reason evidence { item result source } } } }`, map[string]any{"r": sid})["assessResource"].(map[string]any)
			require.Equal(t, "UNREACHABLE", got["healthStatus"], "%v", got)
			hosts.StartSSHD(t, 1)
			ok(driftAdmin, `mutation($r: ID!) { pauseAssessments(input: {resource: $r, paused: false}) { id } }`, map[string]any{"r": sid})
			require.Eventually(t, func() bool { return assessment(steady)["health"] == "HEALTHY" }, 60*time.Second, 200*time.Millisecond, "resumed, the schedule finds it healthy again")

			for _, h := range hosts.Hosts { // clean up for the next store
				op := startAs(t, p, driftAdmin, "remove", "hello-"+h.Name, h.Name, env)
				waitForEndAs(t, p, driftAdmin, op)
				require.Equal(t, "SUCCEEDED", statusAs(t, p, driftAdmin, op))
			}
		})
	}
}

// startAs is runOn with a bearer token.
func startAs(t *testing.T, p *proc, bearer, action, name, host, env string) string {
	t.Helper()
	r := postAs(t, p, bearer, `mutation($a: String!, $n: String!, $h: String!, $e: String!) { createIntent(input: {action: $a, targetResourceType: "linux.service", desiredResult: {name: $n}, constraints: {environment: $e, host: $h}}) { id } }`,
		map[string]any{"a": action, "n": name, "h": host, "e": env})
	require.Empty(t, r.Errors, "%v", r.Errors)
	r = postAs(t, p, bearer, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": r.Data["createIntent"].(map[string]any)["id"]})
	require.Empty(t, r.Errors, "%v", r.Errors)
	plan := r.Data["planIntent"].(map[string]any)
	require.Equal(t, "READY", plan["status"], "%v", plan)
	r = postAs(t, p, bearer, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})
	require.Empty(t, r.Errors, "%v", r.Errors)
	return r.Data["startOperation"].(map[string]any)["id"].(string)
}

// waitForEndAs waits for an operation to end, reading it with bearer.
func waitForEndAs(t *testing.T, p *proc, bearer, op string) {
	t.Helper()
	require.Eventually(t, func() bool {
		switch statusAs(t, p, bearer, op) {
		case "SUCCEEDED", "FAILED", "CANCELLED", "ROLLED_BACK":
			return true
		}
		return false
	}, 2*time.Minute, 100*time.Millisecond)
}

// logLines are the lines of a server's log that mention what.
func logLines(log, what string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, what) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
