package executor_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/service"
)

// leasedExecutor starts an executor of svc on s that holds the database's
// lease as holder, for terms of a second (or the term given).
func leasedExecutor(t *testing.T, s *cypher.Store, svc *service.Service, holder string, term ...time.Duration) (*executor.Executor, error) {
	ex := executor.New(executor.Config{Store: s, Dir: t.TempDir(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Hooks: svc,
		Lease: s, LeaseHolder: holder, LeaseTerm: append(term, time.Second)[0]})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); ex.Stop() })
	return ex, ex.Start(ctx)
}

// TestOneExecutorPerDatabase: a second executor on a database whose
// executor is alive (it renews its lease) does not start: it waits two
// lease terms, in case the holder died, then fails with CONFLICT naming
// the holder. Once the first stops, it gives the lease back, and the next
// starts at once. An operation then runs under the new one.
func TestOneExecutorPerDatabase(t *testing.T) {
	s, svc := leaseCase(t)
	first, err := leasedExecutor(t, s, svc, "first", time.Minute)
	require.NoError(t, err)

	start := time.Now()
	_, err = leasedExecutor(t, s, svc, "second")
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "first")
	require.GreaterOrEqual(t, time.Since(start), 2*time.Second, "it waited two terms for a holder that might have died")

	first.Stop()
	second, err := leasedExecutor(t, s, svc, "second")
	require.NoError(t, err, "the first gave its lease back (its term was a minute)")
	op := storedChain(t, s)
	second.Launch(org, op.ID, nil)
	waitFor(t, s, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationSucceeded })
}

// TestLosingTheLeaseStopsTheExecutor: an executor whose lease is taken
// (here by hand, as an executor that believed it expired would) stops
// running operations at its next renewal and says so on Lost.
func TestLosingTheLeaseStopsTheExecutor(t *testing.T) {
	s, svc := leaseCase(t)
	ex, err := leasedExecutor(t, s, svc, "holder")
	require.NoError(t, err)
	_, err = neo4j.ExecuteQuery(context.Background(), driverOf(t), `MATCH (l:ExecutorLease) SET l.holder = 'thief', l.expires = timestamp() + 60000`, nil, neo4j.EagerResultTransformer)
	require.NoError(t, err)
	select {
	case err := <-ex.Lost():
		require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err))
		require.Contains(t, err.Error(), "thief")
	case <-time.After(5 * time.Second):
		t.Fatal("the executor did not notice that it lost its lease")
	}
	op := storedChain(t, s)
	ex.Launch(org, op.ID, nil) // stopped: nothing runs it
	time.Sleep(500 * time.Millisecond)
	stored, err := s.GetOperation(context.Background(), org, op.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.OperationPending, stored.Status)
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

func openNeo4j(t *testing.T) *cypher.Store {
	s, err := cypher.Open(cypher.Config{URI: neo4jServer.URI, User: neo4jServer.User, Password: neo4jServer.Password})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func driverOf(t *testing.T) neo4j.DriverWithContext {
	d, err := neo4j.NewDriverWithContext(neo4jServer.URI, neo4jServer.Auth())
	require.NoError(t, err)
	t.Cleanup(func() { d.Close(context.Background()) })
	return d
}

// clearLease removes the lease node, as on a new database.
func clearLease(t *testing.T) {
	_, err := neo4j.ExecuteQuery(context.Background(), driverOf(t), `MATCH (l:ExecutorLease) DETACH DELETE l`, nil, neo4j.EagerResultTransformer)
	require.NoError(t, err)
}

// unreachableLease is the database's lease while the database can be
// made unreachable (every call fails as a lost connection would).
type unreachableLease struct {
	executor.Lease
	down atomic.Bool
}

func (l *unreachableLease) AcquireExecutorLease(ctx context.Context, holder string, ttl time.Duration) (bool, capstan.LeaseHolder, error) {
	if l.down.Load() {
		return false, capstan.LeaseHolder{}, capstan.Errorf(capstan.EUNAVAILABLE, "neo4j unreachable")
	}
	return l.Lease.AcquireExecutorLease(ctx, holder, ttl)
}

// TestALeaseThatRunsOutPausesOperations: when the lease cannot be renewed
// before it runs out (the database is unreachable), the executor stops
// running operations, since another executor could now take the lease;
// once it takes the lease back, it resumes every unfinished operation,
// including one started while it was paused.
func TestALeaseThatRunsOutPausesOperations(t *testing.T) {
	s, svc := leaseCase(t)
	lease := &unreachableLease{Lease: s}
	logs := &testenv.SyncBuffer{}
	ex := executor.New(executor.Config{Store: s, Dir: t.TempDir(), Log: slog.New(slog.NewTextHandler(logs, nil)), Hooks: svc,
		Lease: lease, LeaseHolder: "paused", LeaseTerm: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); ex.Stop() })
	require.NoError(t, ex.Start(ctx))

	lease.down.Store(true)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "lease runs out before it can be renewed") }, 10*time.Second, 20*time.Millisecond)
	op := storedChain(t, s)
	ex.Launch(org, op.ID, nil)
	time.Sleep(500 * time.Millisecond)
	stored, err := s.GetOperation(context.Background(), org, op.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.OperationPending, stored.Status, "paused: nothing runs")

	lease.down.Store(false)
	waitFor(t, s, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationSucceeded })
	select {
	case err := <-ex.Lost():
		t.Fatalf("the lease was taken back, not lost: %v", err)
	default:
	}
}

// TestTheHolderRunsOperationsStartedElsewhere: an operation stored by a
// server without the lease (one waiting for it) is run by the holder, at
// its next renewal.
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
	dir := t.TempDir()
	start := func() error {
		ex := executor.New(executor.Config{Store: s, Dir: dir, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Hooks: svc, Lease: s, LeaseTerm: time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(func() { cancel(); ex.Stop() })
		return ex.Start(ctx)
	}
	require.NoError(t, start())
	err := start()
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "used by another process")
}
