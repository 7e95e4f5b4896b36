package executor_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/service"
)

const recoveryPack = `id: recovery
version: 1.0.0
scenarios:
  - id: thing.recover
    action: recover
    target_resource_type: thing
    plan:
      nodes:
        - id: write-then-wait
          type: job
          title: Record a run, then take a while
          job:
            run: {runner: shell, script: 'echo run >> runs.txt; touch started; sleep 30', timeout: 1m}
            outputs:
              evidence:
                - {name: ran-once, type: command, script: 'grep -c run runs.txt', output_pattern: '^1$'}
            controls: {idempotent: false}
        - id: after
          type: verification
          title: Afterwards
          after: [write-then-wait]
          probes: [{name: ok, type: sim}]
`

// TestRestartRecoversAnInterruptedJobFromItsEvidence stops the executor
// while a non-idempotent job runs, starts a new one on the same store, and
// checks that the job is recovered from its evidence, not run again.
func TestRestartRecoversAnInterruptedJobFromItsEvidence(t *testing.T) {
	forEachStore(t, testRecovery)
}

func testRecovery(t *testing.T, store capstan.Store) {
	dir, jobDir := t.TempDir(), t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	newExecutor := func() (*executor.Executor, context.CancelFunc) {
		ex := executor.New(executor.Config{Store: store, Dir: dir, JobDir: jobDir, Log: log, Hooks: svcOf[store], KeepSandboxes: true})
		testenv.Wakes(svcOf[store]).Listen(ex.Wake) // before it starts: its steps read it
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, ex.Start(ctx))
		return ex, cancel
	}
	svc, _ := setup(t, store, org)
	svcOf[store] = svc
	first, cancel := newExecutor()
	admin := as("alice", capstan.RoleAdmin)
	_, err := svc.InstallPackYAML(admin, "recovery.yaml", []byte(recoveryPack))
	require.NoError(t, err)
	in, err := svc.CreateIntent(admin, service.IntentInput{Action: "recover", TargetResourceType: "thing", Constraints: map[string]any{"environment": "dev"}})
	require.NoError(t, err)
	plan, err := svc.PlanIntent(admin, in.ID)
	require.NoError(t, err)
	op, err := svc.StartOperation(admin, plan.ID, "")
	require.NoError(t, err)
	sandbox := filepath.Join(jobDir, "sandbox", op.ID)
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(sandbox, "started")); return err == nil }, 20*time.Second, 10*time.Millisecond)
	cancel()
	first.Stop()

	second, cancel2 := newExecutor()
	defer func() { cancel2(); second.Stop() }()
	op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
	require.Equal(t, capstan.OperationSucceeded, op.Status)
	runs, err := os.ReadFile(filepath.Join(sandbox, "runs.txt"))
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(runs), "run"), "the non-idempotent job ran exactly once")
	events, err := store.ListEvents(context.Background(), org, op.ID, 0, 1000)
	require.NoError(t, err)
	require.Contains(t, eventTypesOf(events), "node.recovered")
}

var svcOf = map[capstan.Store]*service.Service{}

func eventTypesOf(es []capstan.OperationEvent) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}

// storedChain stores a started operation of a two-job chain without
// launching it: the tests then change it or launch it themselves.
func storedChain(t *testing.T, store capstan.Store) *capstan.Operation {
	t.Helper()
	nodes, edges := dagPlan("chain", 2)
	plan := readyPlan(t, store, nodes, edges)
	require.NoError(t, plan.Move(capstan.PlanRunning))
	op := &capstan.Operation{IntentID: plan.IntentID, PlanID: plan.ID, PlanRevision: plan.Revision, Action: "bench",
		Status: capstan.OperationPending, Actor: "alice"}
	require.NoError(t, store.StartOperation(context.Background(), org, op, plan, nil, []capstan.OperationEvent{{Type: "operation.created", Actor: "alice"}}, nil))
	return op
}

// TestRunOfANodeThePlanDoesNotHaveIsIgnored: a stored node run whose node
// is not in the operation's plan (written by something other than an
// executor) never stops the executor; the operation runs its own nodes.
func TestRunOfANodeThePlanDoesNotHaveIsIgnored(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		_, ex := setup(t, store, org)
		op := storedChain(t, store)
		require.NoError(t, store.ApplyOperationChange(context.Background(), org, &capstan.OperationChange{Operation: op,
			NodeRuns: []capstan.OperationNodeRun{{NodeID: "ghost", Status: capstan.NodeRunning, Attempts: 1}},
			Events:   []capstan.OperationEvent{{Type: "node.running", Actor: "someone", Payload: map[string]any{"node": "ghost"}}}}))
		ex.Launch(org, op.ID, nil)
		waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationSucceeded })
	})
}

// alwaysConflicting is a store whose operation steps all fail with a
// conflict, as on an operation whose stored state no step can follow.
type alwaysConflicting struct {
	capstan.Store
	steps atomic.Int64
}

func (s *alwaysConflicting) ApplyOperationChange(context.Context, string, *capstan.OperationChange) error {
	s.steps.Add(1)
	return capstan.Errorf(capstan.ECONFLICT, "operation changed meanwhile")
}

// TestRepeatedConflictsBackOff: a conflict is retried at once on a fresh
// read, but conflicts that keep coming make the loop wait, not spin: the
// loop asks its clock for a second's wait after the fourth conflict in a
// row, and takes no step until that second has passed.
func TestRepeatedConflictsBackOff(t *testing.T) {
	org = testenv.NewOrg()
	real := testenv.Store(t)
	store := &alwaysConflicting{Store: real}
	clock := &handClock{asked: make(chan time.Duration, 16), fire: make(chan time.Time)}
	_, ex := setup(t, store, org, func(c *executor.Config) { c.Clock = clock })
	op := storedChain(t, real)
	ex.Launch(org, op.ID, nil)
	for round := 1; round <= 3; round++ {
		require.Equal(t, time.Second, <-clock.asked, "a wait, not a busy loop")
		require.Equal(t, int64(4+round-1), store.steps.Load(), "three conflicts retried at once, then one step per wait")
		clock.fire <- time.Now()
	}
}

// handClock is a clock whose waits end when the test says: After reports
// each wait asked for on asked and ends it when the test sends on fire.
type handClock struct {
	asked chan time.Duration
	fire  chan time.Time
}

func (c *handClock) Now() time.Time { return time.Now() }

func (c *handClock) After(d time.Duration) <-chan time.Time {
	c.asked <- d
	return c.fire
}

// unreadable is a store on which one operation cannot be read: what both
// stores do with a damaged record (storetest.UnreadableOperation: reading
// it is INTERNAL, and it is still listed as unfinished).
type unreadable struct {
	capstan.Store
	id string
}

func (s unreadable) GetOperation(ctx context.Context, org, id string) (*capstan.Operation, error) {
	if id == s.id {
		return nil, capstan.Errorf(capstan.EINTERNAL, "operation %s: stored record cannot be decoded", id)
	}
	return s.Store.GetOperation(ctx, org, id)
}

// TestAnUnreadableOperationDoesNotStopTheOthers: a restarted executor
// resumes every unfinished operation it can read. One it cannot read
// neither fails the start nor holds the others back: its own resumption
// logs why and tries again, and it stays as stored.
func TestAnUnreadableOperationDoesNotStopTheOthers(t *testing.T) {
	forEachStore(t, func(t *testing.T, real capstan.Store) {
		broken, fine := storedChain(t, real), storedChain(t, real)
		logs := &testenv.SyncBuffer{}
		setup(t, unreadable{Store: real, id: broken.ID}, org, func(c *executor.Config) {
			c.Log = slog.New(slog.NewTextHandler(logs, nil))
		})
		waitFor(t, real, fine.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationSucceeded })
		require.Eventually(t, func() bool { return strings.Contains(logs.String(), broken.ID) },
			5*time.Second, 20*time.Millisecond, "the operation that cannot be read is named in the log")
		stored, err := real.GetOperation(context.Background(), org, broken.ID)
		require.NoError(t, err)
		require.Equal(t, capstan.OperationPending, stored.Status, "nothing was written to it")
	})
}
