package embedded_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/embedded"
)

// The crash sweep of the step log: a child process takes an operation's
// steps, importing a resource after each (a write of other buckets and
// their indexes, logged the same way), and is killed (SIGKILL) at each
// instant of a commit, the nth time it gets there, with a checkpoint due
// every three commits and a flush of the memtable after each. The data directory is then opened as the kill
// left it, and again after what a power cut may also do
// (LoseWhatWasNotSynced): every acknowledged step and import is there, a
// step is all there or not at all (the operation's version and its
// events agree; a resource is found by its key or not at all), bbolt's
// own check passes, and the operation takes its next step.

const (
	childDirEnv   = "CAPSTAN_STEPLOG_CHILD_DIR"
	childCrashEnv = "CAPSTAN_STEPLOG_CHILD_CRASH"
	childSteps    = 20
)

func TestACrashAtEveryInstantOfACommit(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"step-logged", "step-applied", "flush-committed", "checkpoint-synced", "checkpoint-logged", "log-renamed"} {
		for _, power := range []bool{false, true} {
			name := point
			if power {
				name += "/power-cut"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				for nth := 1; ; nth++ {
					dir := t.TempDir()
					acked, killed := runChild(t, dir, fmt.Sprintf("%s:%d", point, nth))
					if !killed {
						require.Greater(t, nth, 1, "the child never reached %s", point)
						break // every instant of this kind was swept
					}
					if power {
						require.NoError(t, embedded.LoseWhatWasNotSynced(dir))
					}
					checkRecovered(t, dir, acked)
				}
			})
		}
	}
}

// TestStepLogChild is the child of the sweep; it does nothing in a
// normal run.
func TestStepLogChild(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		return
	}
	embedded.SetCheckpointEvery(3)
	embedded.SetRotateAt(4 << 10) // a new log every few checkpoints
	if at := os.Getenv(childCrashEnv); at != "" {
		point, nth, _ := strings.Cut(at, ":")
		n, err := strconv.Atoi(nth)
		require.NoError(t, err)
		embedded.CrashAt(point, n)
	}
	ctx := context.Background()
	s, err := embedded.Open(dir, embedded.FlushAt(1)) // a flush in the background after every commit
	require.NoError(t, err)
	op := startChildOperation(t, s)
	fmt.Printf("acked %d\n", op.Version)
	for i := 0; i < childSteps; i++ {
		require.NoError(t, s.ApplyOperationChange(ctx, "acme", &capstan.OperationChange{Operation: op,
			Events: []capstan.OperationEvent{{Type: "operation.progress", Actor: "executor", Payload: map[string]any{"step": i}}}}))
		fmt.Printf("acked %d\n", op.Version)
		_, err := s.ImportResources(ctx, "acme", []*capstan.Resource{childResource(i)})
		require.NoError(t, err)
		fmt.Printf("imported %d\n", i+1)
	}
	require.NoError(t, s.Close())
}

// childResource is the resource the child imports after its step i.
func childResource(i int) *capstan.Resource {
	return &capstan.Resource{Type: "compute.node", Name: fmt.Sprintf("node-%d", i), Environment: "prod", LifecycleStatus: capstan.LifecycleActive,
		HealthStatus: capstan.HealthHealthy, ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "linux.host"}}}
}

func startChildOperation(t *testing.T, s *embedded.Store) *capstan.Operation {
	return startOperation(t, s, capstan.OperationRunning, "the-child")
}

// startOperation stores, in organization acme, an intent, a plan of one
// verification and an operation of it in status, with idempotency key
// idem (none when empty).
func startOperation(t *testing.T, s *embedded.Store, status capstan.OperationStatus, idem string) *capstan.Operation {
	ctx := context.Background()
	in := &capstan.Intent{Actor: "alice", Action: "install", TargetResourceType: "tempo.instance", Mode: capstan.ModeSimple, Status: capstan.IntentSubmitted}
	require.NoError(t, s.CreateIntent(ctx, "acme", in))
	plan := &capstan.Plan{IntentID: in.ID, ScenarioRef: "minio.install@1.0.0", Status: capstan.PlanReady, Revision: 1,
		Customizations: capstan.Customizations{BaseTemplate: "minio.install@1.0.0"},
		Nodes:          []capstan.PlanNode{{ID: "verify", Type: capstan.NodeVerification, Title: "Verify", Probes: []capstan.Probe{{Name: "up", Type: "sim"}}}}}
	require.NoError(t, in.Move(capstan.IntentPlanned))
	require.NoError(t, s.CreatePlan(ctx, "acme", plan, in, nil))
	require.NoError(t, plan.Move(capstan.PlanRunning))
	op := &capstan.Operation{IntentID: in.ID, PlanID: plan.ID, PlanRevision: 1, Action: "install", Status: status, Actor: "alice", IdempotencyKey: idem}
	require.NoError(t, s.StartOperation(ctx, "acme", op, plan, nil, []capstan.OperationEvent{{Type: "operation.created", Actor: "alice"}}, nil))
	return op
}

// childAcks is what the child acknowledged: its operation's version and how
// many resources it imported.
type childAcks struct{ version, imported int64 }

// runChild runs the child in dir, crashing as at says, and returns what
// it acknowledged and whether it was killed.
func runChild(t *testing.T, dir, at string) (childAcks, bool) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestStepLogChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childCrashEnv+"="+at)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	var got childAcks
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "acked "); ok {
			got.version, err = strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
		}
		if v, ok := strings.CutPrefix(lines.Text(), "imported "); ok {
			got.imported, err = strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		ws := exit.Sys().(syscall.WaitStatus)
		require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the child failed: %v\n%s", err, stderr.String())
		return got, true
	}
	require.NoError(t, err, stderr.String())
	return got, false
}

// checkRecovered opens dir and checks what it holds against the last
// acknowledged version, then takes a step.
func checkRecovered(t *testing.T, dir string, got childAcks) {
	ctx := context.Background()
	s, err := embedded.Open(dir)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, embedded.CheckDB(s))
	for i := range int(got.imported) + 1 { // the one being imported may be there, whole
		r, err := s.GetResourceByKey(ctx, "acme", childResource(i).Key())
		if i == int(got.imported) && capstan.ErrorCode(err) == capstan.ENOTFOUND {
			break
		}
		require.NoError(t, err, "an acknowledged import is lost")
		require.Equal(t, childResource(i).Name, r.Name)
		require.Equal(t, "linux.host", r.ProvidedCapabilities[0].Capability)
	}
	acked := got.version
	if acked == 0 {
		return // killed before the operation was acknowledged: nothing is owed
	}
	op, err := s.GetOperationByKey(ctx, "acme", "the-child")
	require.NoError(t, err)
	require.GreaterOrEqual(t, op.Version, acked, "an acknowledged step is lost")
	require.LessOrEqual(t, op.Version, acked+1, "at most the step being committed is there unacknowledged")
	events, err := s.ListEvents(ctx, "acme", op.ID, 0, 0)
	require.NoError(t, err)
	require.Len(t, events, int(op.Version), "a step's operation and its event are written together")
	for i, e := range events {
		require.Equal(t, int64(i+1), e.Sequence)
	}
	require.NoError(t, s.ApplyOperationChange(ctx, "acme", &capstan.OperationChange{Operation: op,
		Events: []capstan.OperationEvent{{Type: "operation.progress", Actor: "executor", Payload: map[string]any{"after": "the crash"}}}}))
}

// TestAFailedAppendStopsTheStoresWrites: when the step log cannot be
// written, the store answers nothing more, reads included (UNAVAILABLE,
// saying to restart: what it holds may not all survive one), and the
// next open has every step acknowledged before and not the failed one.
func TestAFailedAppendStopsTheStoresWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := embedded.Open(dir, embedded.FlushAt(1)) // a flush in the background after every commit
	require.NoError(t, err)
	op := startChildOperation(t, s)
	step := func(s *embedded.Store, op *capstan.Operation) error {
		return s.ApplyOperationChange(ctx, "acme", &capstan.OperationChange{Operation: op,
			Events: []capstan.OperationEvent{{Type: "operation.progress", Actor: "executor"}}})
	}
	require.NoError(t, step(s, op))
	acked := op.Version
	require.NoError(t, embedded.BreakStepLog(s))
	err = step(s, op)
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "restart Capstan")
	require.Equal(t, acked, op.Version, "the caller's operation is as it was")
	_, err = s.GetOperation(ctx, "acme", op.ID)
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err), "no read after it either: %v", err)
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(s.Ping(ctx)), "readiness says so")
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(s.CreateIntent(ctx, "acme",
		&capstan.Intent{Actor: "alice", Action: "install", TargetResourceType: "tempo.instance", Mode: capstan.ModeSimple, Status: capstan.IntentSubmitted})),
		"no write after it")
	_ = s.Close()
	require.NoError(t, s.Close(), "a second close is no error")

	s, err = embedded.Open(dir)
	require.NoError(t, err)
	defer s.Close()
	stored, err := s.GetOperationByKey(ctx, "acme", "the-child")
	require.NoError(t, err)
	require.Equal(t, acked, stored.Version)
	require.NoError(t, step(s, stored), "the reopened store takes the step")
}

// TestADirectoryWithoutItsStepLogIsRefused: a data directory at the step
// log's level whose steps.log is gone is not opened (its last steps
// would be lost), and says why.
func TestADirectoryWithoutItsStepLogIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(dir)
	require.NoError(t, err)
	startChildOperation(t, s)
	require.NoError(t, s.Close())
	require.NoError(t, os.Remove(filepath.Join(dir, "steps.log")))
	_, err = embedded.Open(dir)
	require.Equal(t, capstan.EINTERNAL, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "steps.log is missing")
}

// TestClosingWhileStepsCommit: a store closed while steps commit and a
// checkpoint is due every batch neither panics nor loses an
// acknowledged step.
func TestClosingWhileStepsCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	embedded.SetCheckpointEvery(1)
	defer embedded.SetCheckpointEvery(2048)
	s, err := embedded.Open(dir, embedded.FlushAt(1)) // a flush in the background after every commit
	require.NoError(t, err)
	op := startChildOperation(t, s)
	acked, running := make(chan int64, 1), make(chan struct{})
	go func() {
		last := op.Version
		defer func() { acked <- last }()
		for i := 0; ; i++ {
			if s.ApplyOperationChange(ctx, "acme", &capstan.OperationChange{Operation: op,
				Events: []capstan.OperationEvent{{Type: "operation.progress", Actor: "executor"}}}) != nil {
				return
			}
			last = op.Version
			if i == 10 {
				close(running)
			}
		}
	}()
	<-running
	require.NoError(t, s.Close())
	last := <-acked
	s, err = embedded.Open(dir)
	require.NoError(t, err)
	defer s.Close()
	stored, err := s.GetOperationByKey(ctx, "acme", "the-child")
	require.NoError(t, err)
	require.GreaterOrEqual(t, stored.Version, last)
}

// TestAPanickingStepLeavesTheStoreWritable: a step whose write panics
// (its caller recovers, as a resolver's does) rolls its transaction back;
// the next write commits.
func TestAPanickingStepLeavesTheStoreWritable(t *testing.T) {
	ctx := context.Background()
	s, err := embedded.Open(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	op := startChildOperation(t, s)
	func() {
		defer func() { require.NotNil(t, recover()) }()
		_ = embedded.PanicInAStep(ctx, s, op)
	}()
	require.NoError(t, s.ApplyOperationChange(ctx, "acme", &capstan.OperationChange{Operation: op,
		Events: []capstan.OperationEvent{{Type: "operation.progress", Actor: "executor"}}}))
}

// TestALogOfAnotherDirectoryIsRefused: a steps.log beside a capstan.db
// it was not written with (copied in from elsewhere) is refused at open,
// before its checkpoint is written into the database.
func TestALogOfAnotherDirectoryIsRefused(t *testing.T) {
	big, small := t.TempDir(), t.TempDir()
	s, err := embedded.Open(big)
	require.NoError(t, err)
	for range 200 {
		startOperation(t, s, capstan.OperationRunning, "")
	}
	require.NoError(t, s.Close())
	s, err = embedded.Open(small)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	data, err := os.ReadFile(filepath.Join(big, "steps.log"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(small, "steps.log"), data, 0o600))
	_, err = embedded.Open(small)
	require.Equal(t, capstan.EINTERNAL, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "not of one data directory")
}

// TestPagesACheckpointReachesStayAsSynced holds bbolt to what the step
// log's recovery rests on: while the checkpoint's reader is pinned,
// unsynced commits never write over a page the checkpoint reaches. A
// thousand steps and other writes later (pages freed, split and reused),
// every such page is byte for byte as it was synced.
func TestPagesACheckpointReachesStayAsSynced(t *testing.T) {
	ctx := context.Background()
	s, err := embedded.Open(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	ops := []*capstan.Operation{startChildOperation(t, s)}
	for range 20 {
		ops = append(ops, startOperation(t, s, capstan.OperationRunning, ""))
	}
	reached, err := embedded.CheckpointNow(s)
	require.NoError(t, err)
	require.NotEmpty(t, reached)
	for i := range 1000 {
		op := ops[i%len(ops)]
		require.NoError(t, s.ApplyOperationChange(ctx, "acme", &capstan.OperationChange{Operation: op,
			NodeRuns: []capstan.OperationNodeRun{{NodeID: fmt.Sprintf("n%04d", i), Status: capstan.NodeRunning, Attempts: 1}},
			Events:   []capstan.OperationEvent{{Type: "node.running", Actor: "executor", Payload: map[string]any{"pad": strings.Repeat("x", i%700)}}}}))
	}
	now, err := embedded.PagesNow(s, reached)
	require.NoError(t, err)
	for id, was := range reached {
		require.Equal(t, was, now[id], "page %d, reached by the checkpoint, was written over", id)
	}
}

// TestATornHeaderPromisingMoreThanTheFileIsTheEnd: a last record whose
// header promises more bytes than the log has (up to the 1 GiB a record
// may hold) is torn: the open keeps every record before it.
func TestATornHeaderPromisingMoreThanTheFileIsTheEnd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := embedded.Open(dir, embedded.FlushAt(1)) // a flush in the background after every commit
	require.NoError(t, err)
	op := startChildOperation(t, s)
	require.NoError(t, s.ApplyOperationChange(ctx, "acme", &capstan.OperationChange{Operation: op,
		Events: []capstan.OperationEvent{{Type: "operation.progress", Actor: "executor"}}}))
	embedded.CloseWithoutCheckpoint(s) // as a kill leaves it: the step in the log alone
	require.NoError(t, embedded.TearTheLogTail(dir, 1<<30-1))
	s, err = embedded.Open(dir)
	require.NoError(t, err)
	defer s.Close()
	stored, err := s.GetOperationByKey(ctx, "acme", "the-child")
	require.NoError(t, err)
	require.Equal(t, op.Version, stored.Version)
}

// TestReadersSeeEveryFlushWhole: while steps commit and a flush writes
// the memtable to bbolt after every one, each read (a backup's dump, one
// read of everything) finds the operation at a version whose events are
// all there, none twice: no reader sees a flush half published.
func TestReadersSeeEveryFlushWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := embedded.Open(t.TempDir(), embedded.FlushAt(1))
	require.NoError(t, err)
	defer s.Close()
	op := startChildOperation(t, s)
	var readers sync.WaitGroup
	stop := make(chan struct{})
	reads := make([]int, 2)
	for r := range reads {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				var version int64
				seqs := map[int64]bool{}
				require.NoError(t, s.Dump(ctx, "acme", func(rec capstan.BackupRecord) error {
					switch rec.Kind {
					case capstan.BackupOperation:
						var o capstan.Operation
						require.NoError(t, json.Unmarshal(rec.Data, &o))
						version = o.Version
					case capstan.BackupEvent:
						var e capstan.OperationEvent
						require.NoError(t, json.Unmarshal(rec.Data, &e))
						require.False(t, seqs[e.Sequence], "event %d read twice", e.Sequence)
						seqs[e.Sequence] = true
					}
					return nil
				}))
				require.Len(t, seqs, int(version), "a read's operation and events are of one state")
				reads[r]++
			}
		})
	}
	for i := range 300 {
		require.NoError(t, s.ApplyOperationChange(ctx, "acme", &capstan.OperationChange{Operation: op,
			Events: []capstan.OperationEvent{{Type: "operation.progress", Actor: "executor", Payload: map[string]any{"step": i}}}}))
	}
	close(stop)
	readers.Wait()
	require.Positive(t, reads[0]+reads[1])
}
