package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/neo4jtest"
)

// BenchmarkReplicasOnOneNeo4j starts real `capstan serve` processes on
// one Neo4j — one, then three — and runs 100 operations of 100 no-op
// jobs on them, released at once (runThroughput). Each count runs a
// batch first to warm Neo4j's JIT and its own, then b.N batches, and
// reports nodes per second over them: three replicas against one is the
// figure the replicas' design is judged by. At a small
// CAPSTAN_BENCH_NODES (make test) the batch shrinks in proportion.
func BenchmarkReplicasOnOneNeo4j(b *testing.B) {
	bin := buildCapstan(b)
	db, err := neo4jtest.Start(context.Background())
	require.NoError(b, err, "Neo4j is part of the test suite")
	b.Cleanup(func() { db.Close() })
	size := benchNodes()
	ops, nodes := max(1, 100*min(size, 1000)/1000), min(100, size)
	for _, replicas := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas-%d", replicas), func(b *testing.B) {
			c := config{capstan: bin, token: "bench-token-0123456789", replicas: replicas, store: "neo4j", neo4jURI: db.URI,
				operations: ops, nodes: nodes, window: 30 * time.Minute, rounds: 1 + b.N}
			var wall, cpu time.Duration
			var busy float64
			var done, round int
			b.ResetTimer()
			require.NoError(b, runThroughput(c, func(t throughput) {
				if round++; round > 1 { // the first warms up
					wall += t.wall
					cpu += t.serverCPU
					busy += t.busy * t.wall.Seconds()
					done += t.operations * t.nodes
				}
			}))
			b.ReportMetric(float64(done)/wall.Seconds(), "nodes/s")
			b.ReportMetric(100*busy/wall.Seconds(), "%machine-busy")
			b.ReportMetric(float64(cpu.Microseconds())/float64(done), "server-cpu-µs/node")
		})
	}
}

// benchNodes is the benchmarks' size (CAPSTAN_BENCH_NODES, default 1000).
func benchNodes() int {
	if n, err := strconv.Atoi(os.Getenv("CAPSTAN_BENCH_NODES")); err == nil && n > 0 {
		return n
	}
	return 1000
}

// buildCapstan builds the capstan binary the benchmark starts.
func buildCapstan(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "capstan")
	out, err := exec.Command("go", "build", "-o", bin, "../capstan").CombinedOutput()
	require.NoError(b, err, "build capstan: %s", out)
	return bin
}
