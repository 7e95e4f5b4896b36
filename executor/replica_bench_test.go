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
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/service"
)

// BenchmarkDecisionToEventAcrossReplicas: a gate decided through replica
// B, which does not own the operation, becomes a command that replica A,
// its owner, applies in its next step (woken by its tailer). Reported:
// the mutation's round trip (answer-*: recorded, applied by A, read back
// by B, woken by B's tailer), and from the answer to the decision's event
// and to the next node's start on a subscriber of B (event-*, next-node-*).
func BenchmarkDecisionToEventAcrossReplicas(b *testing.B) {
	org = testenv.NewOrg()
	s := openNeo4j(b)
	clearLease(b)
	b.Cleanup(func() { clearLease(b) })
	svc := testenv.DemoIn(b, s, org)
	logs := slog.New(slog.NewTextHandler(io.Discard, nil))
	owner := executor.New(executor.Config{Store: s, Dir: b.TempDir(), JobDir: b.TempDir(), Log: logs, Hooks: svc, Lease: s, LeaseHolder: "owner", LeaseTerm: 30 * time.Second})
	testenv.Wakes(svc).Listen(owner.Wake)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(func() { cancel(); owner.Stop() })
	require.NoError(b, owner.Start(ctx))
	tail := func(store *cypher.Store, broker *live.Broker, touched func(capstan.OperationTouch)) {
		tailer := &live.Tailer{Timeline: store, Broker: broker, Touched: touched, Log: logs}
		tailed := make(chan struct{})
		go func() { defer close(tailed); tailer.Run(ctx) }()
		b.Cleanup(func() { cancel(); <-tailed })
	}
	brokerA := live.NewBroker(0)
	b.Cleanup(brokerA.Close)
	tail(s, brokerA, owner.Touched) // A's: learns of B's commands
	other := openNeo4j(b)
	brokerB := live.NewBroker(0)
	b.Cleanup(brokerB.Close)
	tail(other, brokerB, nil)
	elsewhere := service.New(other, logs) // replica B: answers the decision, owns nothing
	elsewhere.Changes = brokerB

	nodes := []capstan.PlanNode{
		{ID: "gate", Type: capstan.NodeGate, Title: "gate", Gate: &capstan.GateSpec{Type: "approval", Reason: "replicas", RequiredRoles: []string{capstan.RoleSRE}}},
		{ID: "next", Type: capstan.NodeJob, Title: "next", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}, Outputs: capstan.JobOutputs{Evidence: []capstan.Probe{{Name: "ok", Type: "sim"}}}}},
	}
	var answers, decided, next []time.Duration
	for b.Loop() {
		b.StopTimer()
		plan := readyPlan(b, s, nodes, []capstan.Edge{{From: "gate", To: "next"}})
		op, err := svc.StartOperation(as("alice", capstan.RoleAdmin), plan.ID, "")
		require.NoError(b, err)
		sub := brokerB.Operation(org, op.ID)
		for waiting := false; !waiting; {
			got, err := s.GetOperation(context.Background(), org, op.ID)
			require.NoError(b, err)
			waiting = got.Status == capstan.OperationWaiting
			time.Sleep(5 * time.Millisecond)
		}
		b.StartTimer()
		asked := time.Now()
		_, err = elsewhere.DecideGate(as("bob", capstan.RoleSRE), op.ID, "gate", true, "")
		answered := time.Now()
		answers = append(answers, answered.Sub(asked))
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
						decided = append(decided, max(0, time.Since(answered)))
					case !sawNext && e.Type == "node.running" && e.Payload["node"] == "next":
						sawNext = true
						next = append(next, max(0, time.Since(answered)))
					}
				}
			case <-time.After(30 * time.Second):
				b.Fatalf("no event within 30 s (decision %v, next %v)", sawDecision, sawNext)
			}
		}
		sub.Close()
	}
	b.ReportMetric(percentile(answers, 50), "answer-p50-ms")
	b.ReportMetric(percentile(answers, 99), "answer-p99-ms")
	b.ReportMetric(percentile(decided, 50), "event-p50-ms")
	b.ReportMetric(percentile(decided, 99), "event-p99-ms")
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
