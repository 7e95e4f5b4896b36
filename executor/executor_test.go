package executor_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/secret"
	"github.com/capstan-dev/capstan/service"
)

// executorDirs and jobDirs remember each store's executor directory
// (kept artifacts, diagnostics) and job directory (sandboxes, outputs).
var executorDirs, jobDirs = map[capstan.Store]string{}, map[capstan.Store]string{}

// vaults are the secret stores of the executors setup made, by store.
var vaults = map[capstan.Store]job.Secrets{}

func setup(t testing.TB, store capstan.Store, org string, options ...func(*executor.Config)) (*service.Service, *executor.Executor) {
	t.Helper()
	svc := testenv.DemoIn(t, store, org)
	dir, jobDir := t.TempDir(), t.TempDir()
	executorDirs[store], jobDirs[store] = dir, jobDir
	file, err := secret.OpenFile(filepath.Join(dir, "secrets.json"), bytes.Repeat([]byte{9}, secret.KeySize))
	require.NoError(t, err)
	cfg := executor.Config{Store: store, Dir: dir, JobDir: jobDir, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Hooks: svc, KeepSandboxes: true,
		Runners: map[string]job.Runner{"sim": local.SimRunner{Instant: true}, "shell": local.ShellRunner{}, "http": local.HTTPRunner{}},
		Secrets: secret.NewVault(file)}
	for _, o := range options {
		o(&cfg)
	}
	vaults[store] = cfg.Secrets
	ex := executor.New(cfg)
	testenv.Wakes(svc).Listen(ex.Wake) // before it starts: its steps read it
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, ex.Start(ctx))
	t.Cleanup(func() { cancel(); ex.Stop() })
	return svc, ex
}

// org is the organization of the running test (tests run one at a time).
var org string

func as(actor string, roles ...string) context.Context {
	return capstan.WithActor(context.Background(), &capstan.Actor{ID: actor, OrganizationID: org, Roles: roles})
}

// waitFor polls the operation until cond holds.
func waitFor(t *testing.T, store capstan.Store, opID string, cond func(*capstan.Operation) bool) *capstan.Operation {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		op, err := store.GetOperation(context.Background(), org, opID)
		require.NoError(t, err)
		if cond(op) {
			return op
		}
		time.Sleep(20 * time.Millisecond)
	}
	events, _ := store.ListEvents(context.Background(), org, opID, 0, 1000)
	t.Fatalf("operation %s did not reach the expected state; timeline: %+v", opID, events)
	return nil
}

func TestMinioInstallRunsThroughItsProdGate(t *testing.T) {
	forEachStore(t, testMinioInstall)
}

func testMinioInstall(t *testing.T, store capstan.Store) {
	svc, _ := setup(t, store, org)
	alice := as("alice", capstan.RoleOperator)
	in, err := svc.CreateIntent(alice, service.IntentInput{Action: "install", TargetResourceType: "minio.instance", Scenario: "minio.install@1.0.0",
		Constraints: map[string]any{"environment": "prod", "cluster": "prod-k8s"}})
	require.NoError(t, err)
	plan, err := svc.PlanIntent(alice, in.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanReady, plan.Status, "%v", plan.Problems)

	op, err := svc.StartOperation(alice, plan.ID, "key-1")
	require.NoError(t, err)
	again, err := svc.StartOperation(alice, plan.ID, "key-1")
	require.NoError(t, err)
	require.Equal(t, op.ID, again.ID, "the same idempotency key returns the same operation")

	op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })
	_, err = svc.EditPlan(alice, plan.ID, plan.Version+1, []capstan.PlanChange{{Op: capstan.ChangeRemove, Node: "verify-s3"}})
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "a started plan is frozen (invariant 4)")

	_, err = svc.DecideGate(as("victor", capstan.RoleViewer), op.ID, "approve-prod-storage", true, "")
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err))
	aliceSRE := as("alice", capstan.RoleSRE)
	_, err = svc.DecideGate(aliceSRE, op.ID, "approve-prod-storage", true, "lgtm")
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err), "in prod the starter's approval would not count: it is refused, not silently recorded")
	require.Contains(t, capstan.ErrorMessage(err), "an approver other than its starter")
	g, err := svc.DecideGate(as("bob", capstan.RoleSRE), op.ID, "approve-prod-storage", true, "approved")
	require.NoError(t, err)
	require.Equal(t, capstan.GateApproved, g.Status)
	require.Len(t, g.Decisions, 1)

	op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
	require.Equal(t, capstan.OperationSucceeded, op.Status)
	recs, err := store.OperationRecords(context.Background(), org, op.ID)
	require.NoError(t, err)
	for _, r := range recs.NodeRuns {
		require.Equal(t, capstan.NodeSucceeded, r.Status, r.NodeID)
	}
	var items []string
	for _, e := range recs.Evidence {
		items = append(items, e.ProducedBy+"/"+e.Item+"="+e.Result)
	}
	require.ElementsMatch(t, []string{"render-values/values-rendered=passed", "helm-install/pods-ready=passed", "verify-s3/s3-health=passed"}, items)
	require.NotEmpty(t, recs.Artifacts, "job output is kept as diagnostics")
	events, err := store.ListEvents(context.Background(), org, op.ID, 0, 1000)
	require.NoError(t, err)
	for i, e := range events {
		require.Equal(t, int64(i+1), e.Sequence, "gap-free timeline")
		require.NotEmpty(t, e.Actor)
	}
	require.Equal(t, "operation.created", events[0].Type)
	require.Equal(t, "operation.succeeded", events[len(events)-1].Type)
}

func TestShellJobNeedsEvidenceAndRetries(t *testing.T) {
	forEachStore(t, testShellJob)
}

func testShellJob(t *testing.T, store capstan.Store) {
	svc, _ := setup(t, store, org)
	admin := as("alice", capstan.RoleAdmin)
	_, err := svc.InstallPackYAML(admin, "shell.yaml", []byte(shellPack))
	require.NoError(t, err)
	in, err := svc.CreateIntent(admin, service.IntentInput{Action: "probe", TargetResourceType: "thing", Constraints: map[string]any{"environment": "dev"}})
	require.NoError(t, err)
	plan, err := svc.PlanIntent(admin, in.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanReady, plan.Status, "%v", plan.Problems)
	op, err := svc.StartOperation(admin, plan.ID, "")
	require.NoError(t, err)
	op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
	require.Equal(t, capstan.OperationFailed, op.Status)
	recs, err := store.OperationRecords(context.Background(), org, op.ID)
	require.NoError(t, err)
	runs := map[string]capstan.OperationNodeRun{}
	for _, r := range recs.NodeRuns {
		runs[r.NodeID] = r
	}
	require.Equal(t, capstan.NodeSucceeded, runs["writes-file"].Status)
	require.Equal(t, capstan.NodeFailed, runs["exits-zero-but-wrong"].Status, "exit 0 with a failed probe is a failed node (invariant 5)")
	require.Contains(t, runs["exits-zero-but-wrong"].Error, "evidence did not pass")
	require.Equal(t, 2, runs["exits-zero-but-wrong"].Attempts, "retried by its policy")
}

const shellPack = `id: shellcheck
version: 1.0.0
capabilities:
  - {key: thing.cap, category: test}
scenarios:
  - id: thing.probe
    action: probe
    target_resource_type: thing
    plan:
      nodes:
        - id: writes-file
          type: job
          title: Write a file from a parameter
          parameters: {greeting: "hello; rm -rf /"}
          job:
            run: {runner: shell, script: 'printf "%s" "$CAPSTAN_PARAM_GREETING" > greeting.txt', timeout: 10s}
            outputs:
              evidence:
                - {name: file-has-greeting, type: command, script: 'cat greeting.txt', output_pattern: '^hello; rm -rf /$'}
        - id: exits-zero-but-wrong
          type: job
          title: Exit 0 without doing the work
          after: [writes-file]
          job:
            run: {runner: shell, script: 'true'}
            outputs:
              evidence:
                - {name: marker-exists, type: command, script: 'test -f marker'}
            controls:
              retry: {initial_interval: 10ms, maximum_attempts: 2, on_exhausted: fail}
`

// TestSeedExampleRunsEndToEnd starts the seed's Tempo plan: its object
// storage sub-operation installs a dedicated MinIO (through its own prod
// gate), the MinIO becomes a resource that provides object_storage.s3, and
// the parent continues through its own gate to a verified result.
func TestSeedExampleRunsEndToEnd(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, _ := setup(t, store, org)
		alice := as("alice", capstan.RoleOperator, capstan.RoleSRE)
		bob := as("bob", capstan.RoleSRE)
		op, child := startSeed(t, svc, store, alice) // the child waits at the MinIO prod gate
		_, err := svc.DecideGate(bob, child.ID, "approve-prod-storage", true, "dedicated storage ok")
		require.NoError(t, err)

		waitFor(t, store, op.ID, func(o *capstan.Operation) bool {
			return o.Status == capstan.OperationWaiting && nodeStatus(t, store, op.ID, "approve-rollout").Status == capstan.NodeWaitingApproval
		})
		tempo, err := store.GetResourceByKey(context.Background(), org, "tempo.instance/prod-tempo")
		require.NoError(t, err)
		require.Equal(t, capstan.LifecycleProvisioning, tempo.LifecycleStatus)
		require.Equal(t, op.ID, tempo.ActiveOperationID, "the resource points at the operation creating it")
		_, err = svc.DecideGate(bob, op.ID, "approve-rollout", true, "ship it")
		require.NoError(t, err)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationSucceeded, op.Status)
		tempo, err = store.GetResourceByKey(context.Background(), org, "tempo.instance/prod-tempo")
		require.NoError(t, err)
		require.Equal(t, capstan.LifecycleActive, tempo.LifecycleStatus)
		require.Equal(t, op.ID, tempo.LastOperationID)
		require.Empty(t, tempo.ActiveOperationID)
		require.NotEmpty(t, tempo.ObservedState["evidence"], "observed state from the operation's evidence")

		child, err = store.GetOperation(context.Background(), org, child.ID)
		require.NoError(t, err)
		require.Equal(t, capstan.OperationSucceeded, child.Status)
		events, err := store.ListEvents(context.Background(), org, op.ID, 0, 1000)
		require.NoError(t, err)
		var provider string
		for _, e := range events {
			if e.Type == "binding.resolved" {
				provider = e.Payload["provider"].(string)
			}
		}
		require.NotEmpty(t, provider)
		r, err := store.GetResourceByKey(context.Background(), org, provider)
		require.NoError(t, err)
		require.Equal(t, "minio.instance", r.Type)
		require.Equal(t, child.ID, r.LastOperationID, "the resource points at the operation that created it (invariant 1)")
		pc := r.Provides("object_storage.s3")
		require.NotNil(t, pc)
		require.Equal(t, "dedicated", pc.Attributes["access_mode"])
		require.Equal(t, "eu-central", pc.Scope["region"])
		require.Equal(t, []capstan.Relationship{{Type: capstan.RelRunsOn, Target: "kubernetes.cluster/prod-k8s"}}, r.Relationships)

		// The parent's binding follows: resolved to the new MinIO, saying
		// which sub-operation created it; Tempo uses it, so the explorer
		// sees the edge from both ends.
		plan, err := store.GetPlan(context.Background(), org, op.PlanID)
		require.NoError(t, err)
		b := plan.Binding("object-storage")
		require.Equal(t, capstan.BindingResolved, b.Status)
		require.Equal(t, provider, b.Provider.ResourceKey)
		require.Equal(t, r.ID, b.Provider.ResourceID)
		require.Contains(t, b.Reason, capstan.OperationGID(child.ID), "the reason names the sub-operation by the id the API takes")
		require.Equal(t, capstan.PlanCompleted, plan.Status, "the plan follows its operation")
		in, err := store.GetIntent(context.Background(), org, op.IntentID)
		require.NoError(t, err)
		require.Equal(t, capstan.IntentCompleted, in.Status, "the intent follows its operation")
		require.Contains(t, tempo.Relationships, capstan.Relationship{Type: capstan.RelUses, Target: provider})
		users, err := store.Dependencies(context.Background(), org, r.ID, capstan.Incoming, 1, capstan.MaxWalkResources)
		require.NoError(t, err)
		require.True(t, slices.ContainsFunc(users, func(d capstan.Dependency) bool { return d.Resource.Key() == tempo.Key() }), "dependencies(INCOMING) of the MinIO finds Tempo")
	})
}

// startSeed starts the seed's Tempo operation and waits until its MinIO
// child waits at its prod gate.
func startSeed(t *testing.T, svc *service.Service, store capstan.Store, actor context.Context) (op, child *capstan.Operation) {
	t.Helper()
	in, err := svc.CreateIntent(actor, testenv.SeedIntent())
	require.NoError(t, err)
	plan, err := svc.PlanIntent(actor, in.ID)
	require.NoError(t, err)
	op, err = svc.StartOperation(actor, plan.ID, "")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		list, _, err := store.ListOperations(context.Background(), org, capstan.OperationFilter{Status: capstan.OperationWaiting})
		require.NoError(t, err)
		for _, o := range list {
			if o.ParentID == op.ID {
				child = o
			}
		}
		return child != nil
	}, 20*time.Second, 20*time.Millisecond)
	return op, child
}
