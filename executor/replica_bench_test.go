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
// and to the next node's start on a subscriber of B, which follows the
// operation as the API's subscriptions do (event-*, next-node-*).
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
		events := make(chan *capstan.OperationEvent, 1024)
		feedCtx, stopFeed := context.WithCancel(ctx)
		live.StartFeed(feedCtx, brokerB, org, op.ID, storeSource{other, org, op.ID}, 0, chanOut(events)) // as a client of B follows it
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
			case e := <-events:
				switch {
				case !sawDecision && e.Type == "gate.approved":
					sawDecision = true
					decided = append(decided, max(0, time.Since(answered)))
				case !sawNext && e.Type == "node.running" && e.Payload["node"] == "next":
					sawNext = true
					next = append(next, max(0, time.Since(answered)))
				}
			case <-time.After(30 * time.Second):
				got, _ := s.GetOperation(context.Background(), org, op.ID)
				recs, _ := s.OperationRecords(context.Background(), org, op.ID)
				b.Fatalf("no event within 30 s (decision %v, next %v): operation %s, commands %+v, runs %+v", sawDecision, sawNext, got.Status, recs.Commands, recs.NodeRuns)
			}
		}
		stopFeed()
	}
	b.ReportMetric(percentile(answers, 50), "answer-p50-ms")
	b.ReportMetric(percentile(answers, 99), "answer-p99-ms")
	b.ReportMetric(percentile(decided, 50), "event-p50-ms")
	b.ReportMetric(percentile(decided, 99), "event-p99-ms")
	b.ReportMetric(percentile(next, 50), "next-node-p50-ms")
	b.ReportMetric(percentile(next, 99), "next-node-p99-ms")
}

// storeSource replays an operation's timeline from a store (a feed's
// catch-up, as the API's subscriptions do).
type storeSource struct {
	s       capstan.Store
	org, op string
}

func (x storeSource) Events(ctx context.Context, after int64, limit int) ([]capstan.OperationEvent, error) {
	return x.s.ListEvents(ctx, x.org, x.op, after, limit)
}

func (x storeSource) Terminal(ctx context.Context) (bool, error) {
	op, err := x.s.GetOperation(ctx, x.org, x.op)
	if err != nil {
		return false, err
	}
	return op.Status.Terminal(), nil
}

// chanOut hands a feed's events to the benchmark.
type chanOut chan *capstan.OperationEvent

func (c chanOut) TrySend(e *live.Shared) bool {
	select {
	case c <- e.Event:
		return true
	default:
		return false
	}
}

func (c chanOut) Send(ctx context.Context, e *live.Shared) error {
	select {
	case c <- e.Event:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c chanOut) End(error) {}

// percentile is the p-th percentile of ds, in milliseconds.
func percentile(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[min(len(s)-1, len(s)*p/100)].Microseconds()) / 1000
}
