package executor_test

import (
	"fmt"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/shard"
	"github.com/capstan-dev/capstan/internal/gctune"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/service"
)

// BenchmarkManyOperations runs many chains of no-op jobs at once on one
// executor — 100 operations of 100 nodes, 1,000 of 10 — beside one chain
// of 100 alone, on both stores (on Neo4j with the shard leases and their
// fencing, as a replica runs), and reports nodes per second over the
// whole batch: from the first start to the last end. The embedded store
// runs on a disk and in memory (embedded-tmpfs: the floor of its CPU).
// At a small CAPSTAN_BENCH_NODES (make test) the batches shrink in
// proportion.
func BenchmarkManyOperations(b *testing.B) {
	defer debug.SetGCPercent(gctune.Apply()) // the collector as the server runs it
	scale := min(1.0, float64(benchNodes())/1000)
	for _, store := range []string{"embedded", "embedded-tmpfs", "neo4j"} {
		for _, batch := range []struct{ ops, nodes int }{{1, 100}, {100, 100}, {1000, 10}} {
			ops := max(1, int(float64(batch.ops)*scale))
			b.Run(fmt.Sprintf("%s/%dx%d", store, ops, batch.nodes), func(b *testing.B) {
				org = testenv.NewOrg()
				broker := live.NewBroker(1 << 16) // the feed is read once every operation started
				raw := benchStore(b, store)
				counted := &countingStore{Store: raw}
				s := live.Store{Store: counted, Broker: broker}
				lease, _ := raw.(shard.Lease)
				svc, _ := setup(b, s, org, func(c *executor.Config) { c.Lease, c.LeaseHolder = lease, "bench-"+org })
				nodes, edges := dagPlan("chain", batch.nodes)
				var total time.Duration
				grouped := groupCounter(raw)
				pages, _ := raw.(interface{ PageWrites() int64 })
				// One untimed batch first: Neo4j's JIT warms over several
				// (measured: 808 nodes/s cold, 1,881 after seven batches), and
				// the figures are compared warm.
				_, _ = runOperations(b, svc, s, broker, ops, nodes, edges)
				var cpu time.Duration
				var commits0, pages0 int64
				if grouped != nil {
					commits0 = grouped.GroupCommits()
				}
				if pages != nil {
					pages0 = pages.PageWrites()
				}
				counted.steps.Store(0)
				for i := 0; i < b.N; i++ {
					wall, used := runOperations(b, svc, s, broker, ops, nodes, edges)
					total, cpu = total+wall, cpu+used
				}
				b.ReportMetric(float64(b.N*ops*batch.nodes)/total.Seconds(), "nodes/s")
				b.ReportMetric(float64(total.Microseconds())/float64(b.N*ops*batch.nodes), "µs/node")
				// The CPU this process spent a node (the executor and, on the
				// embedded store, the store; not Neo4j's): at 2 cores,
				// 10,000 nodes/s leaves 200 µs a node for everything.
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*ops*batch.nodes), "cpu-µs/node")
				if grouped != nil {
					b.ReportMetric(float64(counted.steps.Load())/float64(grouped.GroupCommits()-commits0), "steps/commit")
				}
				if pages != nil { // the embedded store: the pages its flushes wrote, which checkpoints sync
					b.ReportMetric(float64(pages.PageWrites()-pages0)/float64(counted.steps.Load()), "pages/step")
				}
			})
		}
	}
}

// runOperations starts ops operations of the plan and returns the time
// from the first start to the last end, learnt from the organization's
// feed, and the CPU time the process spent meanwhile.
func runOperations(b *testing.B, svc *service.Service, s capstan.Store, broker *live.Broker, ops int, nodes []capstan.PlanNode, edges []capstan.Edge) (time.Duration, time.Duration) {
	plans := make([]*capstan.Plan, ops)
	for j := range plans {
		plans[j] = readyPlan(b, s, nodes, edges)
	}
	ended := broker.Organization(org)
	defer ended.Close()
	cpu0 := processCPU(b)
	start := time.Now()
	pending := map[string]bool{}
	for _, p := range plans {
		op, err := svc.StartOperation(as("alice", capstan.RoleAdmin), p.ID, "")
		require.NoError(b, err)
		pending[op.ID] = true
	}
	for m := range ended.C {
		if pending[m.Operation.ID] && m.Operation.Status.Terminal() {
			require.Equal(b, capstan.OperationSucceeded, m.Operation.Status)
			delete(pending, m.Operation.ID)
			if len(pending) == 0 {
				break
			}
		}
	}
	require.Empty(b, pending, "the feed ended first (overflowed: %v)", ended.Overflowed())
	return time.Since(start), processCPU(b) - cpu0
}

// processCPU is the CPU time (user and system) this process spent so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// groupCounter counts a store's group commits (transactions or statements
// that committed steps), or is nil.
func groupCounter(s capstan.Store) interface{ GroupCommits() int64 } {
	switch g := s.(type) {
	case interface{ GroupCommits() int64 }:
		return g
	case interface{ GroupStatements() int64 }:
		return statementCounter{g}
	}
	return nil
}

type statementCounter struct {
	s interface{ GroupStatements() int64 }
}

func (c statementCounter) GroupCommits() int64 { return c.s.GroupStatements() }
