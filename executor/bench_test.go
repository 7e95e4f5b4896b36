package executor_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/embedded"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/service"
)

// benchNodes is the DAG size (CAPSTAN_BENCH_NODES, default 1000).
func benchNodes() int {
	if n, err := strconv.Atoi(os.Getenv("CAPSTAN_BENCH_NODES")); err == nil && n > 0 {
		return n
	}
	return 1000
}

// dagPlan builds a plan of n no-op sim jobs in a shape: chain, fanout
// (one root, n-1 leaves) or layered (layers of 10, each node after all of
// the previous layer).
func dagPlan(shape string, n int) ([]capstan.PlanNode, []capstan.Edge) {
	nodes := make([]capstan.PlanNode, n)
	var edges []capstan.Edge
	for i := range nodes {
		nodes[i] = capstan.PlanNode{ID: fmt.Sprintf("n%05d", i), Type: capstan.NodeJob, Title: "no-op",
			Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}, Outputs: capstan.JobOutputs{Evidence: []capstan.Probe{{Name: "ok", Type: "sim"}}}}}
		switch {
		case shape == "chain" && i > 0:
			edges = append(edges, capstan.Edge{From: nodes[i-1].ID, To: nodes[i].ID})
		case shape == "fanout" && i > 0:
			edges = append(edges, capstan.Edge{From: nodes[0].ID, To: nodes[i].ID})
		case shape == "layered" && i >= 10:
			layer := i / 10
			for j := (layer - 1) * 10; j < layer*10; j++ {
				edges = append(edges, capstan.Edge{From: nodes[j].ID, To: nodes[i].ID})
			}
		}
	}
	return nodes, edges
}

// BenchmarkExecutor runs DAGs of no-op jobs to completion, every state
// change durable, and reports time per node, nodes per second, allocations
// per node and the heap in use at the end.
func BenchmarkExecutor(b *testing.B) {
	for _, bench := range []struct{ store, shape string }{
		{"embedded", "chain"}, {"embedded", "fanout"}, {"embedded", "layered"},
		{"neo4j", "chain"}, {"neo4j", "fanout"}, {"neo4j", "layered"},
	} {
		b.Run(bench.store+"/"+bench.shape, func(b *testing.B) {
			shape := bench.shape
			org = testenv.NewOrg()
			// The executor commits through the live store, as the server
			// runs it; the benchmark learns the end from the organization's
			// feed instead of polling the store.
			broker := live.NewBroker(0)
			counted := &countingStore{Store: benchStore(b, bench.store)}
			store := live.Store{Store: counted, Broker: broker}
			svc, _ := setup(b, store, org)
			n := benchNodes()
			nodes, edges := dagPlan(shape, n)
			var total time.Duration
			var mallocs, peak uint64
			var commits, written int64
			var committing time.Duration
			// One untimed run of a tenth of the DAG first: the figures are
			// the executor's steady state, not a cold Neo4j JIT-compiling
			// its first few thousand statements (~3 ms a step, 1.2 warm).
			warmNodes, warmEdges := dagPlan(shape, max(n/10, 10))
			require.Equal(b, capstan.OperationSucceeded, runToEnd(b, svc, broker, readyPlan(b, store, warmNodes, warmEdges)))
			for i := 0; i < b.N; i++ {
				plan := readyPlan(b, store, nodes, edges)
				var before, after runtime.MemStats
				resetPeakRSS()
				counted.steps.Store(0)
				counted.busy.Store(0)
				runtime.ReadMemStats(&before)
				writes := storeWrites(counted.Store)
				start := time.Now()
				require.Equal(b, capstan.OperationSucceeded, runToEnd(b, svc, broker, plan))
				commits += counted.steps.Load()
				committing += time.Duration(counted.busy.Load())
				total += time.Since(start)
				written += storeWrites(counted.Store) - writes
				runtime.ReadMemStats(&after)
				mallocs += after.Mallocs - before.Mallocs
				peak = max(peak, peakRSS())
			}
			per := total / time.Duration(b.N*n)
			b.ReportMetric(float64(per.Microseconds()), "µs/node")
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "nodes/s")
			b.ReportMetric(float64(mallocs)/float64(b.N*n), "allocs/node")
			b.ReportMetric(float64(commits)/float64(b.N*n), "commits/node")
			b.ReportMetric(float64(committing.Microseconds())/float64(b.N*n), "commit-µs/node")
			if bench.store == "embedded" {
				b.ReportMetric(float64(written)/float64(commits), "writes/commit")
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
			if peak > 0 {
				b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
			}
		})
	}
}

// countingStore counts the operation changes committed through it: the
// executor's durable steps (a group commit is one).
type countingStore struct {
	capstan.Store
	steps atomic.Int64
	busy  atomic.Int64 // nanoseconds spent committing them
}

func (s *countingStore) ApplyOperationChange(ctx context.Context, org string, ch *capstan.OperationChange) error {
	start := time.Now()
	err := s.Store.ApplyOperationChange(ctx, org, ch)
	if err == nil {
		s.steps.Add(1)
		s.busy.Add(int64(time.Since(start)))
	}
	return err
}

// storeWrites is how many writes an embedded store has made to its file
// (0 for another store).
func storeWrites(s capstan.Store) int64 {
	if e, ok := s.(*embedded.Store); ok {
		return e.Writes()
	}
	return 0
}

// runToEnd starts a ready plan and waits until its operation ends,
// learning the end from the organization's feed instead of polling.
func runToEnd(b *testing.B, svc *service.Service, broker *live.Broker, plan *capstan.Plan) capstan.OperationStatus {
	ended := broker.Organization(org)
	defer ended.Close()
	op, err := svc.StartOperation(as("alice", capstan.RoleAdmin), plan.ID, "")
	require.NoError(b, err)
	return awaitEnd(b, ended, op.ID)
}

// awaitEnd reads an organization's feed until operation opID ends and
// returns how it ended.
func awaitEnd(b *testing.B, feed *live.Subscription, opID string) capstan.OperationStatus {
	for m := range feed.C {
		if m.Operation.ID == opID && m.Operation.Status.Terminal() {
			return m.Operation.Status
		}
	}
	b.Fatalf("the feed ended before operation %s (overflowed: %v)", opID, feed.Overflowed())
	return ""
}

// BenchmarkApprovalToNextNode measures the time from a gate's approval
// (the decideGate call) to the next node starting (its node.running event
// committed and published), on both stores.
func BenchmarkApprovalToNextNode(b *testing.B) {
	for _, name := range []string{"embedded", "neo4j"} {
		b.Run(name, func(b *testing.B) {
			org = testenv.NewOrg()
			broker := live.NewBroker(0)
			store := live.Store{Store: benchStore(b, name), Broker: broker}
			svc, _ := setup(b, store, org)
			nodes := []capstan.PlanNode{
				{ID: "gate", Type: capstan.NodeGate, Title: "gate", Gate: &capstan.GateSpec{Type: "approval", Reason: "bench", RequiredRoles: []string{capstan.RoleSRE}}},
				{ID: "next", Type: capstan.NodeJob, Title: "next", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}, Outputs: capstan.JobOutputs{Evidence: []capstan.Probe{{Name: "ok", Type: "sim"}}}}},
			}
			edges := []capstan.Edge{{From: "gate", To: "next"}}
			var latencies []time.Duration
			for i := 0; i < b.N; i++ {
				plan := readyPlan(b, store, nodes, edges)
				op, err := svc.StartOperation(as("alice", capstan.RoleAdmin), plan.ID, "")
				require.NoError(b, err)
				for {
					o, err := store.GetOperation(context.Background(), org, op.ID)
					require.NoError(b, err)
					if o.Status == capstan.OperationWaiting {
						break
					}
					time.Sleep(2 * time.Millisecond)
				}
				sub := broker.Operation(org, op.ID)
				start := time.Now()
				_, err = svc.DecideGate(as("bob", capstan.RoleSRE), op.ID, "gate", true, "")
				require.NoError(b, err)
				started := false
				for !started {
					m := <-sub.C
					for _, e := range m.Events {
						started = started || (e.Type == "node.running" && e.Payload["node"] == "next")
					}
				}
				latencies = append(latencies, time.Since(start))
				sub.Close()
			}
			b.ReportMetric(percentile(latencies, 50), "p50-ms")
			b.ReportMetric(percentile(latencies, 99), "p99-ms")
		})
	}
}

// benchStore opens the named store: embedded, or the test Neo4j.
func benchStore(b *testing.B, name string) capstan.Store {
	switch name {
	case "embedded":
		return testenv.Store(b)
	case "embedded-tmpfs":
		// The same store in memory (/dev/shm): no write reaches a disk and
		// every sync returns at once, so what it reaches is the floor of
		// the design's CPU on this machine, beside the disk's figure.
		dir, err := os.MkdirTemp("/dev/shm", "capstan-bench-")
		require.NoError(b, err)
		b.Cleanup(func() { os.RemoveAll(dir) })
		s, err := embedded.Open(dir)
		require.NoError(b, err)
		b.Cleanup(func() { s.Close() })
		return s
	}
	s, err := cypher.Open(cypher.Config{URI: neo4jServer.URI, User: neo4jServer.User, Password: neo4jServer.Password})
	require.NoError(b, err)
	b.Cleanup(func() { s.Close() })
	return s
}

// readyPlan stores an intent and a ready plan of the given graph.
func readyPlan(b testing.TB, store capstan.Store, nodes []capstan.PlanNode, edges []capstan.Edge) *capstan.Plan {
	b.Helper()
	in := &capstan.Intent{Actor: "alice", Action: "bench", TargetResourceType: "thing", Mode: capstan.ModeSimple, Status: capstan.IntentSubmitted}
	require.NoError(b, store.CreateIntent(context.Background(), org, in))
	plan := &capstan.Plan{IntentID: in.ID, ScenarioRef: "bench@1.0.0", Status: capstan.PlanReady, Revision: 1, Nodes: nodes, Edges: edges,
		Customizations: capstan.Customizations{BaseTemplate: "bench@1.0.0"}}
	require.NoError(b, in.Move(capstan.IntentPlanned)) // only the latest plan of a planned intent starts
	require.NoError(b, store.CreatePlan(context.Background(), org, plan, in, nil))
	return plan
}

// resetPeakRSS resets the process's peak resident set size (Linux:
// /proc/self/clear_refs); elsewhere it does nothing.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is the process's peak resident set size since the last reset
// (Linux: VmHWM in /proc/self/status), or 0 where it cannot be read.
func peakRSS() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkDurableWriteFloor is the floor under every durable commit on
// this machine, in the same kind of directory the embedded store uses. A
// chain of nodes cannot run faster per node than one durable write (each
// node's start must be durable before its job runs).
//
//   - fsync: one 4 KB page written in place through the page cache and
//     synced, as bbolt does twice per commit (its pages, then its meta page).
//   - direct: one 4 KB block written with O_DIRECT|O_DSYNC over a block
//     already written once: the least any purpose-built log could pay for
//     one durable record on this disk (direct_floor_test.go).
//   - pages-N: N 4 KB pages written at scattered places of a 64 MB file
//     and synced once, as a bbolt commit of N dirty pages does; reported
//     per page: what a checkpoint's sync of the flushed pages
//     (BenchmarkManyOperations' pages/step) costs.
func BenchmarkDurableWriteFloor(b *testing.B) {
	for _, n := range []int{8, 400} {
		b.Run(fmt.Sprintf("pages-%d", n), func(b *testing.B) { benchmarkScatteredPages(b, n) })
	}
	b.Run("fsync", func(b *testing.B) {
		f, err := os.Create(b.TempDir() + "/floor")
		require.NoError(b, err)
		defer f.Close()
		require.NoError(b, f.Truncate(1<<20))
		require.NoError(b, f.Sync())
		page := make([]byte, 4096)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := f.WriteAt(page, int64(i%256)*4096); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/sync")
	})
	b.Run("direct", benchmarkDirectWrite)
}

// benchmarkScatteredPages writes n pages at scattered offsets, then syncs.
func benchmarkScatteredPages(b *testing.B, n int) {
	const size = 64 << 20
	f, err := os.Create(b.TempDir() + "/pages")
	require.NoError(b, err)
	defer f.Close()
	_, err = f.WriteAt(make([]byte, size), 0) // allocated, as a grown bbolt file is
	require.NoError(b, err)
	require.NoError(b, f.Sync())
	page := make([]byte, 4096)
	slot := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for range n {
			slot = (slot + 7919) % (size / 4096) // a prime stride: no two neighbours
			if _, err := f.WriteAt(page, int64(slot)*4096); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/page")
}
