package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/artifact"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/service"
)

// widgetPack exercises what an operation does to its resource: an install
// over HTTP with a secret artifact, an upgrade that rolls back, a repair
// whose gate times out and a configuration whose gate is rejected.
const widgetPack = `id: widgets
version: 1.0.0
capabilities:
  - {key: widget.api, category: test}
scenarios:
  - id: widget.install
    action: install
    target_resource_type: widget
    provides: [{capability: widget.api, attributes: {flavour: plain}}]
    requires:
      - {id: cluster, capability: kubernetes.cluster, strategy: existing, workload: true, constraints: {name: staging-k8s}}
    plan:
      nodes:
        - id: call-api
          type: job
          title: Deploy through the API
          requires: [cluster]
          parameters: {size: small}
          job:
            run: {runner: http, method: POST, url: "%[1]s/deploy", headers: {X-Team: platform}, expect_status: 201}
            outputs:
              evidence: [{name: api-healthy, type: http, url: "%[1]s/health", output_pattern: ok}]
        - id: mint-token
          type: job
          title: Mint an API token
          after: [call-api]
          job:
            run: {runner: shell, script: 'printf "s3cr3t-%%s" "$CAPSTAN_OPERATION" > "$CAPSTAN_OUTPUTS/api-token"; echo "minted $(cat "$CAPSTAN_OUTPUTS/api-token")"'}
            outputs:
              artifacts: [{name: api-token, type: token, sensitivity: secret}]
              evidence: [{name: token-written, type: command, script: 'test -s "$CAPSTAN_OUTPUTS/api-token"'}]
        - id: use-token
          type: job
          title: Use the token
          after: [mint-token]
          job:
            inputs: {artifacts: [api-token]}
            run: {runner: shell, script: 'grep -q s3cr3t "$CAPSTAN_ARTIFACT_API_TOKEN" && echo used > used.txt'}
            outputs:
              evidence: [{name: token-used, type: command, script: 'cat used.txt', output_pattern: '^used$'}]
        - id: observe
          type: verification
          title: The resource is being provisioned by this operation
          after: [use-token]
          probes: [{name: provisioning, type: resource_state, field: lifecycle_status, equals: provisioning}]
  - id: widget.upgrade
    action: upgrade
    target_resource_type: widget
    plan:
      nodes:
        - id: step-one
          type: job
          title: Step one
          job:
            run: {runner: sim}
            outputs: {evidence: [{name: one-done, type: sim}]}
            controls:
              rollback: {strategy: compensate, compensation: {runner: shell, script: 'echo undone-one >> undo.log'}, evidence: [{name: one-undone, type: command, script: 'grep -q undone-one undo.log'}]}
        - id: step-two
          type: job
          title: Step two
          after: [step-one]
          job:
            run: {runner: sim}
            outputs: {evidence: [{name: two-done, type: sim}]}
            controls:
              rollback: {strategy: compensate, compensation: {runner: shell, script: 'echo undone-two >> undo.log'}, evidence: [{name: two-undone, type: command, script: 'grep -q undone-two undo.log'}]}
        - id: step-three
          type: job
          title: Step three fails
          after: [step-two]
          job:
            run: {runner: sim, outcomes: [fail]}
            outputs: {evidence: [{name: three-done, type: sim}]}
            controls: {retry: {maximum_attempts: 1, on_exhausted: fail}}
  - id: widget.repair
    action: repair
    target_resource_type: widget
    plan:
      nodes:
        - id: approve-repair
          type: gate
          title: Approve the repair
          gate: {type: approval, reason: repair, required_roles: [sre], timeout: 50ms, on_timeout: reject}
        - id: repair
          type: job
          title: Repair
          after: [approve-repair]
          job: {run: {runner: sim}, outputs: {evidence: [{name: repaired, type: sim}]}}
  - id: widget.configure
    action: configure
    target_resource_type: widget
    plan:
      nodes:
        - id: approve-config
          type: gate
          title: Approve the configuration
          gate: {type: approval, reason: config, required_roles: [sre]}
        - id: configure
          type: job
          title: Configure
          after: [approve-config]
          job: {run: {runner: sim}, outputs: {evidence: [{name: configured, type: sim}]}}
`

// apiServer is the HTTP endpoint the install job calls.
type apiServer struct {
	mu     sync.Mutex
	bodies []map[string]any
	teams  []string
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/deploy":
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		a.mu.Lock()
		a.bodies, a.teams = append(a.bodies, body), append(a.teams, r.Header.Get("X-Team"))
		a.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	case "/health":
		_, _ = io.WriteString(w, "ok")
	default:
		http.NotFound(w, r)
	}
}

func TestOperationsChangeTheirResource(t *testing.T) {
	forEachStore(t, testResourceLifecycle)
}

// widgets installs the widget pack (its API on a test server) and returns
// the service, the API and a function that starts an operation of action
// on widget/w1.
func widgets(t *testing.T, store capstan.Store) (*service.Service, *apiServer, func(action string) *capstan.Operation) {
	t.Helper()
	svc, _ := setup(t, store, org)
	api := &apiServer{}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	admin := as("alice", capstan.RoleAdmin)
	_, err := svc.InstallPackYAML(admin, "widgets.yaml", []byte(fmt.Sprintf(widgetPack, srv.URL)))
	require.NoError(t, err)
	return svc, api, func(action string) *capstan.Operation {
		in, err := svc.CreateIntent(admin, service.IntentInput{Action: action, TargetResourceType: "widget",
			DesiredResult: map[string]any{"name": "w1"}, Constraints: map[string]any{"environment": "dev"}})
		require.NoError(t, err)
		plan, err := svc.PlanIntent(admin, in.ID)
		require.NoError(t, err)
		require.Equal(t, capstan.PlanReady, plan.Status, "%v", plan.Problems)
		op, err := svc.StartOperation(admin, plan.ID, "")
		require.NoError(t, err)
		return op
	}
}

func testResourceLifecycle(t *testing.T, store capstan.Store) {
	svc, api, run := widgets(t, store)
	ctx := context.Background()
	widget := func() *capstan.Resource {
		r, err := store.GetResourceByKey(ctx, org, "widget/w1")
		require.NoError(t, err)
		return r
	}

	// Install: provisioned by the operation, active when it succeeds.
	op := run("install")
	op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
	require.Equal(t, capstan.OperationSucceeded, op.Status, "%v", timeline(t, store, op.ID))
	r := widget()
	require.Equal(t, capstan.LifecycleActive, r.LifecycleStatus)
	require.Equal(t, capstan.HealthHealthy, r.HealthStatus)
	require.Equal(t, op.ID, r.LastOperationID)
	require.Empty(t, r.ActiveOperationID)
	require.NotNil(t, r.Provides("widget.api"), "the scenario's capability")
	require.Contains(t, r.Relationships, capstan.Relationship{Type: capstan.RelRunsOn, Target: "kubernetes.cluster/staging-k8s"}, "it runs on its workload's provider")
	cluster, err := store.GetResourceByKey(ctx, org, "kubernetes.cluster/staging-k8s")
	require.NoError(t, err)
	deps, err := store.Dependencies(ctx, org, cluster.ID, capstan.Incoming, 1, capstan.MaxWalkResources)
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(deps, func(d capstan.Dependency) bool { return d.Resource.Key() == "widget/w1" }), "the explorer sees it from the cluster too")
	evidence := r.ObservedState["evidence"].(map[string]any)
	require.Equal(t, "passed", evidence["api-healthy"])
	require.Equal(t, "passed", evidence["provisioning"], "the resource_state probe saw it provisioning")
	api.mu.Lock()
	require.Len(t, api.bodies, 1)
	require.Equal(t, "call-api", api.bodies[0]["node"])
	jobEnv := api.bodies[0]["env"].(map[string]any)
	require.Equal(t, "small", jobEnv["CAPSTAN_PARAM_SIZE"], "parameters travel in the body")
	require.Equal(t, "kubernetes.cluster/staging-k8s", jobEnv["CAPSTAN_BINDING_CLUSTER_PROVIDER"], "the job receives its bindings")
	require.Equal(t, "kubernetes.cluster", jobEnv["CAPSTAN_BINDING_CLUSTER_CAPABILITY"])
	require.NotEmpty(t, jobEnv["CAPSTAN_BINDING_CLUSTER_RESOURCE"])
	require.Contains(t, jobEnv["CAPSTAN_BINDING_CLUSTER_ATTRIBUTES"], "{")
	require.Equal(t, []string{"platform"}, api.teams)
	api.mu.Unlock()
	requireSecretKept(t, store, op.ID, "s3cr3t-"+capstan.OperationGID(op.ID))

	// Upgrade: the third step fails, the first two are compensated in
	// reverse order, and the resource is active again.
	op = run("upgrade")
	op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
	require.Equal(t, capstan.OperationRolledBack, op.Status, "%v", timeline(t, store, op.ID))
	runs := nodeRuns(t, store, op.ID)
	require.Equal(t, capstan.NodeRolledBack, runs["step-one"].Status)
	require.Equal(t, capstan.NodeRolledBack, runs["step-two"].Status)
	require.Equal(t, capstan.NodeFailed, runs["step-three"].Status)
	undo, err := os.ReadFile(filepath.Join(jobDirs[store], "sandbox", op.ID, "undo.log"))
	require.NoError(t, err)
	require.Equal(t, "undone-two\nundone-one\n", string(undo), "compensation runs in reverse order of completion")
	require.Contains(t, timeline(t, store, op.ID), "operation.rolling_back")
	require.Equal(t, capstan.LifecycleActive, widget().LifecycleStatus, "a rolled-back change restores the resource")

	// Repair: its gate times out and rejects before any work ran: the
	// resource is left as the repair found it.
	op = run("repair")
	op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
	require.Equal(t, capstan.OperationFailed, op.Status)
	recs, err := store.OperationRecords(ctx, org, op.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.GateTimedOutRejected, recs.Gates[0].Status)
	require.Contains(t, timeline(t, store, op.ID), "gate.timed_out")
	require.Equal(t, capstan.LifecycleActive, widget().LifecycleStatus, "a repair that changed nothing leaves the resource as it was")

	// Configure: a rejected gate fails the operation.
	op = run("configure")
	waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })
	require.Equal(t, op.ID, widget().ActiveOperationID, "the resource points at the operation changing it")
	require.Equal(t, capstan.LifecycleUpdating, widget().LifecycleStatus)
	_, err = svc.DecideGate(as("bob", capstan.RoleSRE), op.ID, "approve-config", false, "not today")
	require.NoError(t, err)
	op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
	require.Equal(t, capstan.OperationFailed, op.Status)
	require.Equal(t, "rejected by bob", nodeRuns(t, store, op.ID)["approve-config"].Error)
	require.NotContains(t, nodeRuns(t, store, op.ID), "configure", "nothing after a rejected gate runs")
	require.Equal(t, op.ID, widget().LastOperationID)
}

// requireSecretKept checks a secret artifact is stored as a reference only:
// its value is in no record, no event and no diagnostics (invariant 10).
func requireSecretKept(t *testing.T, store capstan.Store, opID, value string) {
	t.Helper()
	recs, err := store.OperationRecords(context.Background(), org, opID)
	require.NoError(t, err)
	events, err := store.ListEvents(context.Background(), org, opID, 0, 1000)
	require.NoError(t, err)
	stored, _ := json.Marshal([]any{recs, events})
	require.NotContains(t, string(stored), value)
	var secret *capstan.Artifact
	for i, a := range recs.Artifacts {
		if a.Name == "api-token" {
			secret = &recs.Artifacts[i]
		}
		if a.Type == "diagnostics" {
			out, err := artifact.Read(context.Background(), artifact.Dir{Root: executorDirs[store]}, a, 0)
			require.NoError(t, err)
			require.NotContains(t, string(out), value, a.Name)
		}
	}
	require.NotNil(t, secret)
	require.Equal(t, capstan.SensitivitySecret, secret.Sensitivity)
	name, ok := strings.CutPrefix(secret.StorageRef, "secret:")
	require.True(t, ok, "a secret artifact refers to the secret store: %s", secret.StorageRef)
	data, err := vaults[store].Get(context.Background(), org, name)
	require.NoError(t, err)
	require.Equal(t, value, string(data), "the reference leads to the value")
}

func nodeRuns(t *testing.T, store capstan.Store, opID string) map[string]capstan.OperationNodeRun {
	t.Helper()
	recs, err := store.OperationRecords(context.Background(), org, opID)
	require.NoError(t, err)
	runs := map[string]capstan.OperationNodeRun{}
	for _, r := range recs.NodeRuns {
		runs[r.NodeID] = r
	}
	return runs
}

// timeline lists the operation's event types in order.
func timeline(t *testing.T, store capstan.Store, opID string) []string {
	t.Helper()
	events, err := store.ListEvents(context.Background(), org, opID, 0, 1000)
	require.NoError(t, err)
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	return types
}

// TestCancellingAParentCancelsItsChild cancels the seed's operation while
// its MinIO child waits at its gate: both end cancelled, and both
// resources they were creating are failed, pointing at them.
func TestCancellingAParentCancelsItsChild(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, _ := setup(t, store, org)
		alice := as("alice", capstan.RoleOperator, capstan.RoleSRE)
		op, child := startSeed(t, svc, store, alice)
		_, err := svc.CancelOperation(alice, op.ID, "changed my mind")
		require.NoError(t, err)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationCancelled, op.Status)
		child = waitFor(t, store, child.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationCancelled, child.Status)
		for _, o := range []*capstan.Operation{op, child} {
			r, err := store.GetResourceByKey(context.Background(), org, o.ResourceKey)
			require.NoError(t, err)
			require.Equal(t, capstan.LifecycleFailed, r.LifecycleStatus, r.Key())
			require.Equal(t, o.ID, r.LastOperationID)
		}
	})
}

// TestPerOperationLimit runs three independent shell jobs with one worker
// per operation: they never overlap.
func TestPerOperationLimit(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, _ := setup(t, store, org, func(c *executor.Config) { c.Workers, c.PerOperation = 4, 1 })
		admin := as("alice", capstan.RoleAdmin)
		_, err := svc.InstallPackYAML(admin, "parallel.yaml", []byte(parallelPack))
		require.NoError(t, err)
		in, err := svc.CreateIntent(admin, service.IntentInput{Action: "spread", TargetResourceType: "thing", Constraints: map[string]any{"environment": "dev"}})
		require.NoError(t, err)
		plan, err := svc.PlanIntent(admin, in.ID)
		require.NoError(t, err)
		op, err := svc.StartOperation(admin, plan.ID, "")
		require.NoError(t, err)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationSucceeded, op.Status)
		log, err := os.ReadFile(filepath.Join(jobDirs[store], "sandbox", op.ID, "log"))
		require.NoError(t, err)
		require.Equal(t, strings.Repeat("start\nend\n", 3), string(log), "one job at a time")
	})
}

const parallelPack = `id: parallel
version: 1.0.0
capabilities:
  - {key: thing.cap, category: test}
scenarios:
  - id: thing.spread
    action: spread
    target_resource_type: thing
    plan:
      nodes:
        - {id: a, type: job, title: A, job: {run: {runner: shell, script: 'echo start >> log; sleep 0.2; echo end >> log'}, outputs: {evidence: [{name: ok, type: sim}]}}}
        - {id: b, type: job, title: B, job: {run: {runner: shell, script: 'echo start >> log; sleep 0.2; echo end >> log'}, outputs: {evidence: [{name: ok, type: sim}]}}}
        - {id: c, type: job, title: C, job: {run: {runner: shell, script: 'echo start >> log; sleep 0.2; echo end >> log'}, outputs: {evidence: [{name: ok, type: sim}]}}}
`

// TestAnEndNeverWaitsOnAResourceMovedMeanwhile: the catalog (the
// platform's truth) moves a resource while an operation changes it; the
// operation still ends, keeps what the catalog set, and says so.
func TestAnEndNeverWaitsOnAResourceMovedMeanwhile(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, _, run := widgets(t, store)
		ctx := context.Background()
		op := waitFor(t, store, run("install").ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationSucceeded, op.Status)

		op = run("configure")
		waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })
		w, err := store.GetResourceByKey(ctx, org, "widget/w1")
		require.NoError(t, err)
		require.Equal(t, capstan.LifecycleUpdating, w.LifecycleStatus)
		w.LifecycleStatus = capstan.LifecycleDeleted // the catalog says it is gone
		_, err = store.ImportResources(ctx, org, []*capstan.Resource{w})
		require.NoError(t, err)

		_, err = svc.DecideGate(as("bob", capstan.RoleSRE), op.ID, "approve-config", false, "no")
		require.NoError(t, err)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationFailed, op.Status, "the end is not held up by the resource")
		w, err = store.GetResourceByKey(ctx, org, "widget/w1")
		require.NoError(t, err)
		require.Equal(t, capstan.LifecycleDeleted, w.LifecycleStatus, "what the catalog set is kept")
		require.Empty(t, w.ActiveOperationID)
		require.Equal(t, op.ID, w.LastOperationID)
		require.Contains(t, timeline(t, store, op.ID), "resource.lifecycle_kept")
	})
}
