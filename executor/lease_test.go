package executor_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/shard"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/service"
)

// leasedExecutor starts an executor of svc on s that holds the database's
// lease as holder, for terms of a second (or the term given).
func leasedExecutor(t *testing.T, s *cypher.Store, svc *service.Service, holder string, term ...time.Duration) (*executor.Executor, error) {
	return leasedExecutorLogging(t, s, svc, holder, io.Discard, term...)
}

// leasedExecutorLogging is leasedExecutor writing its log to w.
// leaseTerm is the lease tests' term: short, so that they see renewals
// and expiries quickly, but not so short that a renewal (which has a fifth
// of it) times out on a test machine busy with other packages; at 1 s,
// one did, and the executor stopped its operations.
const leaseTerm = 3 * time.Second

func leasedExecutorLogging(t *testing.T, s *cypher.Store, svc *service.Service, holder string, w io.Writer, term ...time.Duration) (*executor.Executor, error) {
	ex := executor.New(executor.Config{Store: s, Dir: t.TempDir(), JobDir: t.TempDir(), Log: slog.New(slog.NewTextHandler(w, nil)), Hooks: svc,
		Lease: s, LeaseHolder: holder, LeaseTerm: append(term, leaseTerm)[0]})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); ex.Stop() })
	return ex, ex.Start(ctx)
}

// TestShardsSpreadOverExecutors: a second executor on a database starts
// (it no longer waits for the first to go) and takes half of the shards:
// the first hands them over at its next renewal, the second claims them
// at its own. Operations of every shard run, each by one of them. When
// the second stops, it gives its shards back, and the first takes them
// all again at once (it need not wait for them to expire).
func TestShardsSpreadOverExecutors(t *testing.T) {
	s, svc := leaseCase(t)
	first, err := leasedExecutor(t, s, svc, "first")
	require.NoError(t, err)
	require.Len(t, first.Owned(), shard.Shards, "alone, it runs every shard")

	second, err := leasedExecutor(t, s, svc, "second")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return len(first.Owned()) == shard.Shards/2 && len(second.Owned()) == shard.Shards/2
	}, 30*time.Second, 20*time.Millisecond, "first %v, second %v", first.Owned(), second.Owned())
	require.Empty(t, intersect(first.Owned(), second.Owned()), "a shard has one owner")

	var ops []*capstan.Operation
	for i := range shard.Shards {
		ops = append(ops, storedChainIn(t, s, i, ""))
	}
	for _, op := range ops {
		waitFor(t, s, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationSucceeded })
	}

	second.Stop()
	require.Eventually(t, func() bool { return len(first.Owned()) == shard.Shards }, 15*time.Second, 20*time.Millisecond,
		"the second released its shards on stopping: %v", first.Owned())
}

// TestAHandOverWaitsForRunningJobs: a shard handed over to an executor
// that joins starts nothing new, lets its running job finish (it is not
// killed, so not interrupted: it does not need a person afterwards), and
// only then is released; the new owner runs the rest.
func TestAHandOverWaitsForRunningJobs(t *testing.T) {
	s, svc := leaseCase(t)
	first, err := leasedExecutor(t, s, svc, "first")
	require.NoError(t, err)
	// A shard the first will hand over: the second member's share is the
	// upper half (Decide gives up the highest-numbered ones).
	op := storedChainIn(t, s, shard.Shards-1, "1500ms")
	waitFor(t, s, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationRunning })
	second, err := leasedExecutor(t, s, svc, "second")
	require.NoError(t, err)
	done := waitFor(t, s, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
	require.Equal(t, capstan.OperationSucceeded, done.Status)
	require.Contains(t, second.Owned(), shard.Shards-1)
	require.NotContains(t, first.Owned(), shard.Shards-1)
	events, err := s.ListEvents(context.Background(), org, op.ID, 0, 100)
	require.NoError(t, err)
	running := 0
	for _, e := range events {
		require.NotEqual(t, "node.needs_attention", e.Type, "nothing was interrupted: %+v", events)
		if e.Type == "node.running" {
			running++
		}
	}
	require.Equal(t, 2, running, "each node ran once: %+v", events)
}

// TestLosingAShardStopsItsOperations: an executor whose shard lease is
// taken (here by hand, as an executor that believed it expired would)
// stops running that shard's operations at its next renewal; its other
// shards run on.
func TestLosingAShardStopsItsOperations(t *testing.T) {
	s, svc := leaseCase(t)
	ex, err := leasedExecutor(t, s, svc, "holder")
	require.NoError(t, err)
	_, err = neo4j.ExecuteQuery(context.Background(), driverOf(t), `MATCH (l:ExecutorLease {key: $key}) SET l.holder = 'thief', l.expires = timestamp() + 60000, l.token = l.token + 1`,
		map[string]any{"key": shard.ShardKey(3)}, neo4j.EagerResultTransformer)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !slices.Contains(ex.Owned(), 3) }, 15*time.Second, 20*time.Millisecond)
	require.Len(t, ex.Owned(), shard.Shards-1)

	stolen, kept := storedChainIn(t, s, 3, ""), storedChainIn(t, s, 4, "")
	waitFor(t, s, kept.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationSucceeded })
	ex.Launch(org, stolen.ID, nil) // not its shard: nothing runs it
	// One stored after it in a shard it holds is run by a renewal's
	// launch: the path that would start the stolen one, had it kept it.
	later := storedChainIn(t, s, 4, "")
	waitFor(t, s, later.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationSucceeded })
	stored, err := s.GetOperation(context.Background(), org, stolen.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.OperationPending, stored.Status)
}

func intersect(a, b []int) []int {
	var out []int
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// storedChainIn stores a two-node chain whose operation falls into shard,
// each job taking duration.
func storedChainIn(t *testing.T, store capstan.Store, want int, duration string) *capstan.Operation {
	t.Helper()
	nodes, edges := dagPlan("chain", 2)
	for i := range nodes {
		nodes[i].Job.Run.Duration = duration
	}
	plan := readyPlan(t, store, nodes, edges)
	require.NoError(t, plan.Move(capstan.PlanRunning))
	op := &capstan.Operation{IntentID: plan.IntentID, PlanID: plan.ID, PlanRevision: plan.Revision, Action: "bench",
		Status: capstan.OperationPending, Actor: "alice"}
	for op.ID == "" || shard.ShardOf(op.ID) != want {
		op.ID = capstan.NewID()
	}
	require.NoError(t, store.StartOperation(context.Background(), org, op, plan, nil, []capstan.OperationEvent{{Type: "operation.created", Actor: "alice"}}, nil))
	return op
}

// leaseCase gives a lease test a new organization on the test Neo4j, its
// service, and no lease held; the lease is cleared again at its end.
func leaseCase(t *testing.T) (*cypher.Store, *service.Service) {
	org = testenv.NewOrg()
	s := openNeo4j(t)
	clearLease(t)
	t.Cleanup(func() { clearLease(t) })
	return s, testenv.DemoIn(t, s, org)
}

func openNeo4j(t testing.TB) *cypher.Store {
	s, err := cypher.Open(cypher.Config{URI: neo4jServer.URI, User: neo4jServer.User, Password: neo4jServer.Password})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func driverOf(t testing.TB) neo4j.DriverWithContext {
	d, err := neo4j.NewDriverWithContext(neo4jServer.URI, neo4jServer.Auth())
	require.NoError(t, err)
	t.Cleanup(func() { d.Close(context.Background()) })
	return d
}

// clearLease removes the lease node, as on a new database.
func clearLease(t testing.TB) {
	_, err := neo4j.ExecuteQuery(context.Background(), driverOf(t), `MATCH (l) WHERE l:ExecutorLease OR l:ExecutorMember DETACH DELETE l`, nil, neo4j.EagerResultTransformer)
	require.NoError(t, err)
}

// unreachableLease is the database's leases while the database can be
// made unreachable (every call fails as a lost connection would).
type unreachableLease struct {
	shard.Lease
	down atomic.Bool
}

func (l *unreachableLease) JoinExecutors(ctx context.Context, holder string, ttl time.Duration) ([]string, error) {
	if l.down.Load() {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "neo4j unreachable")
	}
	return l.Lease.JoinExecutors(ctx, holder, ttl)
}

// TestALeaseThatRunsOutPausesOperations: when the leases cannot be
// renewed before they run out (the database is unreachable), the executor
// stops running operations, since another executor could now take them;
// once it takes them back, it resumes every unfinished operation,
// including one started while it was paused.
func TestALeaseThatRunsOutPausesOperations(t *testing.T) {
	s, svc := leaseCase(t)
	lease := &unreachableLease{Lease: s}
	logs := &testenv.SyncBuffer{}
	ex := executor.New(executor.Config{Store: s, Dir: t.TempDir(), JobDir: t.TempDir(), Log: slog.New(slog.NewTextHandler(logs, nil)), Hooks: svc,
		Lease: lease, LeaseHolder: "paused", LeaseTerm: leaseTerm})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); ex.Stop() })
	require.NoError(t, ex.Start(ctx))

	lease.down.Store(true)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "leases run out before they can be renewed") }, 30*time.Second, 20*time.Millisecond)
	require.Empty(t, ex.Owned())
	op := storedChain(t, s)
	ex.Launch(org, op.ID, nil)
	// Two more renewals fail after it: while paused, nothing launched it.
	failed := func() int { return strings.Count(logs.String(), "renewing the executor's leases failed") }
	before := failed()
	require.Eventually(t, func() bool { return failed() >= before+2 }, 30*time.Second, 10*time.Millisecond)
	stored, err := s.GetOperation(context.Background(), org, op.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.OperationPending, stored.Status, "paused: nothing runs")

	lease.down.Store(false)
	waitFor(t, s, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationSucceeded })
	require.Len(t, ex.Owned(), shard.Shards, "taken back")
}

// TestTheHolderRunsOperationsStartedElsewhere: an operation stored by
// another server (which does not own its shard) is run by the shard's
// owner, at its next renewal at the latest.
func TestTheHolderRunsOperationsStartedElsewhere(t *testing.T) {
	s, svc := leaseCase(t)
	_, err := leasedExecutor(t, s, svc, "holder")
	require.NoError(t, err)
	op := storedChain(t, s) // stored, never launched here
	waitFor(t, s, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationSucceeded })
}

// TestOneExecutorPerDirectory: the lease's holder is named after the host
// and the executor's directory, so two processes must not share one: the
// second is refused at once, before it could hold the lease as the first.
func TestOneExecutorPerDirectory(t *testing.T) {
	s, svc := leaseCase(t)
	dir, jobDir := t.TempDir(), t.TempDir()
	start := func() error {
		ex := executor.New(executor.Config{Store: s, Dir: dir, JobDir: jobDir, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Hooks: svc, Lease: s, LeaseTerm: time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(func() { cancel(); ex.Stop() })
		return ex.Start(ctx)
	}
	require.NoError(t, start())
	err := start()
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "used by another process")
}

// TestADecisionOnAnotherReplicaWakesTheOwner: a gate decided through
// another process's service (which runs none of the operation's shard)
// reaches the owning executor through its timeline tailer, well within a
// lease term (here 30 s: the once-a-term re-read cannot be what woke it).
func TestADecisionOnAnotherReplicaWakesTheOwner(t *testing.T) {
	s, svc := leaseCase(t)
	logs := &testenv.SyncBuffer{} // the executor's and the tailer's, shown when the test fails
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	})
	owner, err := leasedExecutorLogging(t, s, svc, "owner", logs, 30*time.Second)
	require.NoError(t, err)
	testenv.Wakes(svc).Listen(owner.Wake)
	touched := func(o capstan.OperationTouch) {
		fmt.Fprintf(logs, "touched %s last %d prev %d active %v\n", o.ID, o.LastSequence, o.PrevSequence, o.Active)
		owner.Touched(o)
	}
	tailer := &live.Tailer{Timeline: s, Broker: live.NewBroker(0), Touched: touched, Every: 20 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(logs, nil))}
	var watched string // the operation's id, once started
	t.Cleanup(func() { // what the tailer did, and what it would read now
		if !t.Failed() {
			return
		}
		t.Logf("the tailer read %d times", tailer.Reads.Load())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		touches, now, err := s.TouchedOperations(ctx, 1)
		t.Logf("%d operations touched since the epoch, at %d (err %v)", len(touches), now, err)
		for _, o := range touches {
			if o.ID == watched {
				t.Logf("  the operation: last %d prev %d active %v", o.LastSequence, o.PrevSequence, o.Active)
			}
		}
		res, err := neo4j.ExecuteQuery(ctx, driverOf(t), `SHOW TRANSACTIONS YIELD transactionId, status, elapsedTime, currentQuery`, nil, neo4j.EagerResultTransformer)
		if err == nil {
			for _, r := range res.Records {
				t.Logf("  transaction %v", r.AsMap())
			}
		}
	})
	ctx, stop := context.WithCancel(context.Background())
	tailed := make(chan struct{})
	go func() { defer close(tailed); tailer.Run(ctx) }()
	t.Cleanup(func() { stop(); <-tailed })
	// The tailer's first read is its baseline: what is stored by then is
	// not news to it. The operation starts after it, as on a replica that
	// has been up for a while.
	require.Eventually(t, func() bool { return tailer.Reads.Load() >= 2 }, 30*time.Second, 5*time.Millisecond, "the tailer reads")

	nodes := []capstan.PlanNode{
		{ID: "gate", Type: capstan.NodeGate, Title: "gate", Gate: &capstan.GateSpec{Type: "approval", Reason: "replicas", RequiredRoles: []string{capstan.RoleSRE}}},
		{ID: "next", Type: capstan.NodeJob, Title: "next", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}, Outputs: capstan.JobOutputs{Evidence: []capstan.Probe{{Name: "ok", Type: "sim"}}}}},
	}
	plan := readyPlan(t, s, nodes, []capstan.Edge{{From: "gate", To: "next"}})
	op, err := svc.StartOperation(as("alice", capstan.RoleAdmin), plan.ID, "")
	require.NoError(t, err)
	watched = op.ID
	waitFor(t, s, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })

	elsewhere := service.New(openNeo4j(t), slog.New(slog.NewTextHandler(io.Discard, nil))) // no executor of its own
	decided := time.Now()
	_, err = elsewhere.DecideGate(as("bob", capstan.RoleSRE), op.ID, "gate", true, "")
	require.NoError(t, err)
	waitFor(t, s, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationSucceeded })
	require.Less(t, time.Since(decided), 10*time.Second, "woken by the tailer, not by the once-a-term re-read")
}
