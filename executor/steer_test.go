package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/service"
)

const steerPack = `id: steer
version: 1.0.0
scenarios:
  - id: thing.steer
    action: steer
    target_resource_type: thing
    plan:
      nodes:
        - id: fix
          type: manual_intervention
          title: Fix it by hand
          intervention:
            instructions: Create the file named fixed.
            verification: [{name: fixed-exists, type: command, script: 'test -f fixed'}]
        - id: flaky
          type: job
          title: Needs permission
          after: [fix]
          job:
            run: {runner: shell, script: 'test -f allow'}
            outputs:
              evidence: [{name: allowed, type: command, script: 'test -f allow'}]
            controls: {idempotent: true, retry: {maximum_attempts: 1, on_exhausted: wait}}
  - id: thing.approve
    action: approve
    target_resource_type: thing
    plan:
      nodes:
        - id: two-keys
          type: gate
          title: Two people approve
          gate: {type: approval, reason: Two keys turn together., required_roles: [sre], approvals: 2, timeout: 24h}
  - id: thing.hang
    action: hang
    target_resource_type: thing
    plan:
      nodes:
        - id: forever
          type: job
          title: Never ends
          job:
            run: {runner: shell, script: 'touch started; sleep 60', timeout: 5m}
            outputs:
              evidence: [{name: never, type: sim}]
`

func startSteer(t *testing.T, store capstan.Store, action string) (*service.Service, *capstan.Operation, string) {
	t.Helper()
	svc, _ := setup(t, store, org)
	admin := as("alice", capstan.RoleAdmin)
	_, err := svc.InstallPackYAML(admin, "steer.yaml", []byte(steerPack))
	require.NoError(t, err)
	in, err := svc.CreateIntent(admin, service.IntentInput{Action: action, TargetResourceType: "thing", Constraints: map[string]any{"environment": "dev"}})
	require.NoError(t, err)
	plan, err := svc.PlanIntent(admin, in.ID)
	require.NoError(t, err)
	op, err := svc.StartOperation(admin, plan.ID, "")
	require.NoError(t, err)
	return svc, op, filepath.Join(sandboxRoot(t, store), op.ID)
}

// sandboxRoot is where setup's executor keeps sandboxes for this test.
func sandboxRoot(t *testing.T, store capstan.Store) string {
	t.Helper()
	return filepath.Join(jobDirs[store], "sandbox")
}

func nodeStatus(t *testing.T, store capstan.Store, opID, node string) capstan.OperationNodeRun {
	t.Helper()
	recs, err := store.OperationRecords(context.Background(), org, opID)
	require.NoError(t, err)
	for _, r := range recs.NodeRuns {
		if r.NodeID == node {
			return r
		}
	}
	return capstan.OperationNodeRun{}
}

func TestInterventionsAreVerifiedAndFailedNodesRetried(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, op, sandbox := startSteer(t, store, "steer")
		alice := as("alice", capstan.RoleOperator)
		waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })

		_, err := svc.RecordIntervention(alice, op.ID, "fix", "skipped", "")
		require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "nothing skips verification (invariant 8)")
		_, err = svc.RecordIntervention(alice, op.ID, "fix", "manually_fixed", "I think it is fixed")
		require.NoError(t, err)
		require.Eventually(t, func() bool { return nodeStatus(t, store, op.ID, "fix").Status == capstan.NodeWaitingIntervention }, 10*time.Second, 10*time.Millisecond,
			"an intervention whose verification fails does not let the operation go on")
		reason := nodeStatus(t, store, op.ID, "fix").Error
		require.Contains(t, reason, "the intervention alice recorded at", "the node says its intervention did not verify")
		require.Contains(t, reason, "did not verify")
		require.NotContains(t, reason, "interrupted", "not the wording of a restart")

		require.NoError(t, os.WriteFile(filepath.Join(sandbox, "fixed"), nil, 0o600))
		iv, err := svc.RecordIntervention(alice, op.ID, "fix", "manually_fixed", "created the file")
		require.NoError(t, err)
		require.Equal(t, []string{"fixed-exists"}, iv.RequiresVerification)
		require.Eventually(t, func() bool { return nodeStatus(t, store, op.ID, "flaky").Status == capstan.NodeFailed }, 10*time.Second, 10*time.Millisecond)
		waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })

		require.NoError(t, os.WriteFile(filepath.Join(sandbox, "allow"), nil, 0o600))
		_, err = svc.RetryNode(alice, op.ID, "flaky")
		require.NoError(t, err)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationSucceeded, op.Status)
		require.Equal(t, 2, nodeStatus(t, store, op.ID, "flaky").Attempts)
	})
}

func TestCancelKillsRunningJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, op, sandbox := startSteer(t, store, "hang")
		require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(sandbox, "started")); return err == nil }, 10*time.Second, 10*time.Millisecond)
		start := time.Now()
		_, err := svc.CancelOperation(as("alice", capstan.RoleOperator), op.ID, "changed my mind")
		require.NoError(t, err)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationCancelled, op.Status)
		require.Less(t, time.Since(start), 10*time.Second, "the sleeping job was killed, not waited for")
		require.Equal(t, capstan.NodeCancelled, nodeStatus(t, store, op.ID, "forever").Status)
		_, err = svc.CancelOperation(as("alice", capstan.RoleOperator), op.ID, "again")
		require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))
	})
}

// racingStore lets one other change of the operation win the race against
// the next change committed through it once armed, as the executor does
// when it moves a node while a person cancels.
type racingStore struct {
	capstan.Store
	armed atomic.Bool
	mu    sync.Mutex
	lost  []string // the event types of the changes that lost the race
}

func (s *racingStore) ApplyOperationChange(ctx context.Context, org string, ch *capstan.OperationChange) error {
	if s.armed.CompareAndSwap(true, false) {
		op, err := s.Store.GetOperation(ctx, org, ch.Operation.ID)
		if err != nil {
			return err
		}
		winner := &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{{Type: "test.won_the_race", Actor: "test"}}}
		if err := s.Store.ApplyOperationChange(ctx, org, winner); err != nil {
			return err
		}
		s.mu.Lock()
		s.lost = append(s.lost, ch.Events[0].Type)
		s.mu.Unlock()
	}
	return s.Store.ApplyOperationChange(ctx, org, ch)
}

func (s *racingStore) losers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lost)
}

// TestSteeringDecidesAgainAfterLosingARace: a cancel whose commit loses to
// a concurrent change of the operation reads the new state and cancels;
// the person never sees the version conflict (CI once did, on Neo4j).
func TestSteeringDecidesAgainAfterLosingARace(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		racing := &racingStore{Store: store}
		svc, op, sandbox := startSteer(t, racing, "hang")
		require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(sandbox, "started")); return err == nil }, 10*time.Second, 10*time.Millisecond)
		racing.armed.Store(true) // the executor waits for its job: the next change is the cancel
		_, err := svc.CancelOperation(as("alice", capstan.RoleOperator), op.ID, "changed my mind")
		require.NoError(t, err)
		require.Equal(t, []string{"operation.cancelling"}, racing.losers(), "the cancel did lose the race once")
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationCancelled, op.Status)
		require.Contains(t, timeline(t, store, op.ID), "test.won_the_race")
	})
}

// TestConcurrentApprovalsBothCount: two approvers decide a gate that needs
// two approvals at the same moment; whichever commits second reads the
// first's decision and adds its own, so both succeed and the gate opens.
func TestConcurrentApprovalsBothCount(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, op, _ := startSteer(t, store, "approve")
		waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })
		start := make(chan struct{})
		errs := make(chan error, 2)
		for _, who := range []string{"bob", "carol"} {
			go func() {
				<-start
				_, err := svc.DecideGate(as(who, capstan.RoleSRE), op.ID, "two-keys", true, "")
				errs <- err
			}()
		}
		close(start)
		require.NoError(t, <-errs)
		require.NoError(t, <-errs)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationSucceeded, op.Status)
		recs, err := store.OperationRecords(context.Background(), org, op.ID)
		require.NoError(t, err)
		require.Len(t, recs.Gates, 1)
		require.Equal(t, capstan.GateApproved, recs.Gates[0].Status)
		var who []string
		for _, d := range recs.Gates[0].Decisions {
			who = append(who, d.Actor)
		}
		require.ElementsMatch(t, []string{"bob", "carol"}, who)
		if _, shared := store.(*cypher.Store); !shared { // on Neo4j, other tests' operations (and timers) run too
			require.Eventually(t, func() bool { return timerGoroutines() == "" }, 5*time.Second, 10*time.Millisecond,
				"the gate's 24 h timeout timer ended with its operation; still there:\n%s", timerGoroutines())
		}
	})
}

// timerGoroutines returns the stacks of goroutines that wait for an
// operation's timer (a gate's timeout, a retry's backoff), "" when none
// is left. (Loops of other tests' unfinished operations may run: an
// executor resumes every operation of its database.)
func timerGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "executor.(*loop).after") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
