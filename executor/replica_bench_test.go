package executor_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/service"
)

// BenchmarkDecisionToEventAcrossReplicas measures, on a real Neo4j, how
// long a gate decision answered by one replica (a service with no
// executor of its own) takes to reach a subscriber of another — the
// replica that owns the operation, whose tailer brings the decision's
// commit to its broker and wakes its loop — and, as the floor beside
// it, how long the owner's own next event (the node after the gate)
// takes from the same answer. Reported as p50 and p99 in milliseconds.
func BenchmarkDecisionToEventAcrossReplicas(b *testing.B) {
	org = testenv.NewOrg()
	s := openNeo4j(b)
	clearLease(b)
	b.Cleanup(func() { clearLease(b) })
	svc := testenv.DemoIn(b, s, org)
	logs := slog.New(slog.NewTextHandler(io.Discard, nil))
	owner := executor.New(executor.Config{Store: s, Dir: b.TempDir(), JobDir: b.TempDir(), Log: logs, Hooks: svc, Lease: s, LeaseHolder: "owner", LeaseTerm: 30 * time.Second})
	svc.Launcher = owner
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(func() { cancel(); owner.Stop() })
	require.NoError(b, owner.Start(ctx))
	broker := live.NewBroker(0)
	b.Cleanup(broker.Close)
	tailer := &live.Tailer{Timeline: s, Broker: broker, Touched: owner.Touched, Log: logs}
	tailed := make(chan struct{})
	go func() { defer close(tailed); tailer.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-tailed })
	elsewhere := service.New(openNeo4j(b), logs) // the replica that answers the decision

	nodes := []capstan.PlanNode{
		{ID: "gate", Type: capstan.NodeGate, Title: "gate", Gate: &capstan.GateSpec{Type: "approval", Reason: "replicas", RequiredRoles: []string{capstan.RoleSRE}}},
		{ID: "next", Type: capstan.NodeJob, Title: "next", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}, Outputs: capstan.JobOutputs{Evidence: []capstan.Probe{{Name: "ok", Type: "sim"}}}}},
	}
	var decided, next []time.Duration
	for b.Loop() {
		b.StopTimer()
		plan := readyPlan(b, s, nodes, []capstan.Edge{{From: "gate", To: "next"}})
		op, err := svc.StartOperation(as("alice", capstan.RoleAdmin), plan.ID, "")
		require.NoError(b, err)
		sub := broker.Operation(org, op.ID)
		for waiting := false; !waiting; {
			got, err := s.GetOperation(context.Background(), org, op.ID)
			require.NoError(b, err)
			waiting = got.Status == capstan.OperationWaiting
			time.Sleep(5 * time.Millisecond)
		}
		b.StartTimer()
		_, err = elsewhere.DecideGate(as("bob", capstan.RoleSRE), op.ID, "gate", true, "")
		answered := time.Now()
		require.NoError(b, err)
		var sawDecision, sawNext bool
		for !sawDecision || !sawNext {
			select {
			case m := <-sub.C:
				require.NotNil(b, m, "the subscription ended")
				for _, e := range m.Events {
					switch {
					case !sawDecision && e.Type == "gate.approved":
						sawDecision = true
						decided = append(decided, time.Since(answered))
					case !sawNext && e.Type == "node.running" && e.Payload["node"] == "next":
						sawNext = true
						next = append(next, time.Since(answered))
					}
				}
			case <-time.After(30 * time.Second):
				b.Fatalf("no event within 30 s (decision %v, next %v)", sawDecision, sawNext)
			}
		}
		sub.Close()
	}
	b.ReportMetric(percentile(decided, 50), "decision-p50-ms")
	b.ReportMetric(percentile(decided, 99), "decision-p99-ms")
	b.ReportMetric(percentile(next, 50), "next-node-p50-ms")
	b.ReportMetric(percentile(next, 99), "next-node-p99-ms")
}

// percentile is the p-th percentile of ds, in milliseconds.
func percentile(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[min(len(s)-1, len(s)*p/100)].Microseconds()) / 1000
}
