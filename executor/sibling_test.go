package executor_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/internal/testenv"
)

const siblingPack = `id: sibling
version: 1.0.0
resource_types:
  - {key: nest, display_name: Nest, allowed_actions: [nest]}
  - {key: egg, display_name: Egg, allowed_actions: [install]}
scenarios:
  - id: nest.nest
    action: nest
    target_resource_type: nest
    plan:
      nodes:
        - id: child
          type: sub_operation
          title: Lay an egg
          sub_operation: {scenario: egg.install}
        - id: sibling
          type: job
          title: Record a run, then take a while
          job:
            run: {runner: shell, script: 'echo run >> runs.txt; touch started; sleep 30', timeout: 1m}
            outputs:
              evidence:
                - {name: ran-once, type: command, script: 'grep -c run runs.txt', output_pattern: '^1$'}
            controls: {idempotent: false}
  - id: egg.install
    action: install
    target_resource_type: egg
    plan:
      nodes:
        - id: hatch
          type: gate
          title: Hatch it
          gate: {type: approval, reason: An egg hatches., required_roles: [operator], approvals: 1}
`

// parentLeftOut leaves the parent out of what a restart resumes: it is
// launched when its child ends and notifies it, so that its first read
// finds both at once, the child concluded and the sibling interrupted,
// with no wake-up pending to read the operation again.
type parentLeftOut struct {
	capstan.Store
	parent string
}

func (s parentLeftOut) UnfinishedOperations(ctx context.Context) ([]capstan.OperationRef, error) {
	ops, err := s.Store.UnfinishedOperations(ctx)
	return slices.DeleteFunc(ops, func(o capstan.OperationRef) bool { return o.ID == s.parent }), err
}

// TestAChildThatEndedDoesNotHideAnInterruptedSibling: a restart finds a
// sub_operation node whose child ended and a sibling job the restart
// interrupted. Concluding the child is a commit of its own; the sibling
// is still recovered from its evidence (it used to stay RUNNING forever,
// its resumption dropped with the rest of the touched list).
func TestAChildThatEndedDoesNotHideAnInterruptedSibling(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		dir, jobDir := t.TempDir(), t.TempDir()
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		svc, _ := setup(t, store, org)
		start := func(s capstan.Store) (*executor.Executor, context.CancelFunc) {
			ex := executor.New(executor.Config{Store: s, Dir: dir, JobDir: jobDir, Log: log, Hooks: svc, KeepSandboxes: true})
			testenv.Wakes(svc).Listen(ex.Wake) // before it starts: its steps read it
			ctx, cancel := context.WithCancel(context.Background())
			require.NoError(t, ex.Start(ctx))
			return ex, cancel
		}
		first, cancel := start(store)
		op := startFromPack(t, svc, siblingPack, "nest", "nest")
		sandbox := filepath.Join(jobDir, "sandbox", op.ID)
		require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(sandbox, "started")); return err == nil }, 20*time.Second, 10*time.Millisecond)
		var child string
		require.Eventually(t, func() bool { child = nodeRuns(t, store, op.ID)["child"].ChildOperationID; return child != "" }, 20*time.Second, 10*time.Millisecond)
		waitFor(t, store, child, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })
		cancel()
		first.Stop()

		testenv.Wakes(svc).Listen(nil) // nothing runs: the decision waits in the store, as a command, for the next owner
		decided := make(chan error, 1)
		go func() {
			_, err := svc.DecideGate(as("bob", capstan.RoleOperator), child, "hatch", true, "hatch it")
			decided <- err
		}()
		require.Eventually(t, func() bool {
			recs, err := store.OperationRecords(context.Background(), org, child)
			return err == nil && len(recs.PendingCommands()) == 1
		}, 10*time.Second, 5*time.Millisecond, "the decision is recorded")
		second, cancel2 := start(parentLeftOut{Store: store, parent: op.ID})
		defer func() { cancel2(); second.Stop() }()
		require.NoError(t, <-decided, "the decision is answered once the new owner applied it")
		require.Equal(t, capstan.OperationSucceeded, waitFor(t, store, child, func(o *capstan.Operation) bool { return o.Status.Terminal() }).Status)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		runs := nodeRuns(t, store, op.ID)
		require.Equal(t, capstan.OperationSucceeded, op.Status, "%+v", runs)
		require.Equal(t, capstan.NodeSucceeded, runs["sibling"].Status)
		out, err := os.ReadFile(filepath.Join(sandbox, "runs.txt"))
		require.NoError(t, err)
		require.Equal(t, 1, strings.Count(string(out), "run"), "the non-idempotent sibling ran exactly once")
		require.Contains(t, timeline(t, store, op.ID), "node.recovered")
	})
}

// TestAChildStopsItselfWhenItsParentEnded: a crash right after a parent's
// ending commit, before it asked its child to stop, leaves the child
// going. The restarted child finds its parent ended and cancels itself.
func TestAChildStopsItselfWhenItsParentEnded(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		ctx := context.Background()
		svc, ex := setup(t, store, org)
		op := startFromPack(t, svc, siblingPack, "nest", "nest")
		var child string
		require.Eventually(t, func() bool { child = nodeRuns(t, store, op.ID)["child"].ChildOperationID; return child != "" }, 20*time.Second, 10*time.Millisecond)
		waitFor(t, store, child, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })
		ex.Stop()

		// What the parent's failing commit leaves when the process dies
		// before its next line: the parent FAILED, the child waiting.
		parent, err := store.GetOperation(ctx, org, op.ID)
		require.NoError(t, err)
		require.NoError(t, parent.Move(capstan.OperationFailed))
		require.NoError(t, store.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: parent,
			Events: []capstan.OperationEvent{{Type: "operation.failed", Actor: "executor", Payload: map[string]any{"reason": "a sibling failed"}}}}))

		again := executor.New(executor.Config{Store: store, Dir: t.TempDir(), JobDir: t.TempDir(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Hooks: svc, KeepSandboxes: true})
		testenv.Wakes(svc).Listen(again.Wake) // before it starts: its steps read it
		runCtx, cancel := context.WithCancel(ctx)
		require.NoError(t, again.Start(runCtx))
		defer func() { cancel(); again.Stop() }()
		ended := waitFor(t, store, child, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationCancelled, ended.Status)
		events, err := store.ListEvents(ctx, org, child, 0, 1000)
		require.NoError(t, err)
		var reasons []any
		for _, e := range events {
			if e.Type == "operation.cancelling" {
				reasons = append(reasons, e.Payload["reason"])
			}
		}
		require.Equal(t, []any{"its parent operation ended"}, reasons)
	})
}
