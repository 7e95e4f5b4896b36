package backup_test

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/backup"
	"github.com/capstan-dev/capstan/internal/testenv"
)

// BenchmarkBackup backs up an organization of CAPSTAN_BENCH_RESOURCES
// resources (default 100,000) and CAPSTAN_BENCH_OPERATIONS finished
// operations (default one per hundred resources) from each store, and
// restores each backup onto the other store. It reports the file's
// size and records per second.
//
//	go test -run '^$' -bench BenchmarkBackup -benchtime 1x ./backup/
func BenchmarkBackup(b *testing.B) {
	resources := envInt("CAPSTAN_BENCH_RESOURCES", 100_000)
	operations := envInt("CAPSTAN_BENCH_OPERATIONS", max(resources/100, 5))
	files := map[string][]byte{}
	orgs := map[string]string{}
	for _, kind := range []string{"embedded", "neo4j"} {
		var src store
		if kind == "embedded" {
			src = openEmbedded(b)
		} else {
			src = openNeo4j(b)
		}
		org := testenv.NewOrg()
		orgs[kind] = org
		forget(b, org)
		start := time.Now()
		fill(b, src, org, resources, operations)
		b.Logf("%s: %d resources and %d operations written in %s", kind, resources, operations, time.Since(start).Round(time.Millisecond))
		b.Run(kind+"/backup", func(b *testing.B) {
			var file bytes.Buffer
			var end backup.End
			for b.Loop() {
				file.Reset()
				var err error
				end, err = backup.Write(ctx, &file, backup.Manifest{Store: kind, Organization: org}, src.source(org))
				require.NoError(b, err)
			}
			b.ReportMetric(float64(file.Len()), "bytes")
			b.ReportMetric(float64(end.Records), "records")
			b.ReportMetric(float64(end.Records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			files[kind] = bytes.Clone(file.Bytes())
		})
	}
	for from, to := range map[string]string{"embedded": "neo4j", "neo4j": "embedded"} {
		b.Run(from+"-to-"+to+"/restore", func(b *testing.B) {
			file := files[from]
			var records int64
			for b.Loop() {
				b.StopTimer()
				var dst store
				if to == "embedded" {
					dst = openEmbedded(b)
				} else {
					dst = openNeo4j(b)
					dropOrg(b, orgs[from])
				}
				b.StartTimer()
				sum, err := backup.Load(ctx, bytes.NewReader(file), backup.Target{Store: dst.Store.(capstan.Restorer), Secrets: dst.fileOrNil()})
				require.NoError(b, err)
				records = sum.End.Records
			}
			b.ReportMetric(float64(len(file)), "bytes")
			b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// fill writes resources in imports of 5,000, then operations that each
// start, run a node with evidence, and succeed.
func fill(b *testing.B, s store, org string, resources, operations int) {
	testenv.DemoIn(b, s.Store, org)
	catalog := testenv.SyntheticCatalog(resources)
	for i := 0; i < len(catalog); i += 5000 {
		_, err := s.ImportResources(ctx, org, catalog[i:min(i+5000, len(catalog))])
		require.NoError(b, err)
	}
	for i := range operations {
		in := &capstan.Intent{Actor: "alice", Action: "install", TargetResourceType: "tempo.instance",
			Constraints: map[string]any{"environment": "prod"}, Mode: capstan.ModeSimple, Status: capstan.IntentSubmitted}
		require.NoError(b, s.CreateIntent(ctx, org, in))
		plan := &capstan.Plan{IntentID: in.ID, ScenarioRef: "minio.install@1.0.0", Status: capstan.PlanReady, Revision: 1,
			Customizations: capstan.Customizations{BaseTemplate: "minio.install@1.0.0"},
			Nodes:          []capstan.PlanNode{{ID: "verify", Type: capstan.NodeVerification, Title: "Verify", Probes: []capstan.Probe{{Name: "up", Type: "sim"}}}}}
		require.NoError(b, s.CreatePlan(ctx, org, plan, in, nil))
		require.NoError(b, plan.Move(capstan.PlanRunning))
		op := &capstan.Operation{IntentID: in.ID, PlanID: plan.ID, PlanRevision: 1, Action: "install", Status: capstan.OperationPending,
			Actor: "alice", IdempotencyKey: "bench-" + strconv.Itoa(i)}
		require.NoError(b, s.StartOperation(ctx, org, op, plan, nil, []capstan.OperationEvent{{Type: "operation.created", Actor: "alice"}}, nil))
		require.NoError(b, op.Move(capstan.OperationRunning))
		require.NoError(b, s.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: op,
			NodeRuns: []capstan.OperationNodeRun{{NodeID: "verify", Status: capstan.NodeRunning, Attempts: 1}},
			Events:   []capstan.OperationEvent{{Type: "operation.running", Actor: "executor"}, {Type: "node.running", Actor: "executor"}}}))
		require.NoError(b, op.Move(capstan.OperationSucceeded))
		require.NoError(b, s.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: op,
			NodeRuns: []capstan.OperationNodeRun{{NodeID: "verify", Status: capstan.NodeSucceeded, Attempts: 1}},
			Evidence: []capstan.Evidence{{ProducedBy: "verify", Item: "up", Result: capstan.EvidencePassed, Source: map[string]any{"type": "sim"}}},
			Events:   []capstan.OperationEvent{{Type: "node.succeeded", Actor: "executor"}, {Type: "operation.succeeded", Actor: "executor"}}}))
	}
	require.NoError(b, s.secrets.Put(ctx, org, "registry-token", []byte("a-registry-token-of-the-bench")))
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
