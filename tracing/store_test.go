package tracing_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
	"github.com/capstan-dev/capstan/tracing"
)

// ids are the tests' keyed ids.
var ids = tracing.NewIDs([]byte("the tests' secret key"))

// TestCommittedChangesEndTheirSpans: what a change ends, and nothing
// else, becomes a span with the derived ids.
func TestCommittedChangesEndTheirSpans(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Hour)
	op := &capstan.Operation{Meta: capstan.Meta{ID: "op-1", CreatedAt: t0}, Status: capstan.OperationRunning, StartedAt: &t0}
	cases := []struct {
		name  string
		ch    capstan.OperationChange
		spans []string
	}{
		{"a node starts: nothing ends", capstan.OperationChange{NodeRuns: []capstan.OperationNodeRun{{NodeID: "a", Status: capstan.NodeRunning, Attempts: 1, StartedAt: &t0}}}, nil},
		{"an attempt ends", capstan.OperationChange{NodeRuns: []capstan.OperationNodeRun{{NodeID: "a", Status: capstan.NodeRetrying, Attempts: 1, StartedAt: &t0, FinishedAt: &t1, Error: "timeout"}}}, []string{"node.attempt"}},
		{"a gate begins to wait", capstan.OperationChange{NodeRuns: []capstan.OperationNodeRun{{NodeID: "g", Status: capstan.NodeWaitingApproval, Attempts: 1, StartedAt: &t0}},
			Gates: []capstan.Gate{{NodeID: "g", Status: "waiting"}}}, nil},
		{"a gate is decided", capstan.OperationChange{NodeRuns: []capstan.OperationNodeRun{{NodeID: "g", Status: capstan.NodeSucceeded, Attempts: 1, StartedAt: &t0}},
			Gates: []capstan.Gate{{NodeID: "g", Status: "approved"}}}, []string{"gate.wait"}},
		{"a patch is decided", capstan.OperationChange{Patches: []capstan.PlanPatch{{Meta: capstan.Meta{ID: "p1"}, Status: capstan.PatchApplied,
			Changes:   []capstan.PlanChange{{Op: capstan.ChangeRetry, Node: "a"}, {Op: capstan.ChangeInsertAfter, Node: "a", Template: "mirror"}},
			Decisions: []capstan.PatchDecision{{Actor: "bob", Approve: true, At: t1}}}},
			Events: []capstan.OperationEvent{event.Record("bob", event.Patch{What: "decided", Patch: capstan.PatchGID("p1")})}}, []string{"patch.decision"}},
		{"a patch is only marked stale", capstan.OperationChange{Patches: []capstan.PlanPatch{{Meta: capstan.Meta{ID: "p1"}, Status: capstan.PatchStale,
			Decisions: []capstan.PatchDecision{{Actor: "bob", Approve: true, At: t1}}}}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := tracing.NewProvider(exp, false)
			ch := c.ch
			o := *op
			ch.Operation = &o
			ids.Committed(tp.Tracer("t"), "acme", &ch, t2)
			var names []string
			for _, s := range exp.GetSpans() {
				names = append(names, s.Name)
				require.Equal(t, ids.TraceID("acme", "op-1"), s.SpanContext.TraceID())
				require.Equal(t, ids.OperationSpanID("acme", "op-1"), s.Parent.SpanID())
				require.Contains(t, s.Attributes, tracing.AttrOperation.String(capstan.OperationGID("op-1")), "the id the API accepts")
				switch s.Name {
				case "node.attempt":
					require.Equal(t, ids.AttemptSpanID("acme", "op-1", "a", 1), s.SpanContext.SpanID())
					require.Equal(t, t1, s.EndTime.UTC())
				case "gate.wait":
					require.Equal(t, ids.GateSpanID("acme", "op-1", "g", 1), s.SpanContext.SpanID())
					require.Equal(t, t2, s.EndTime.UTC(), "the wait ends with the decision")
				case "patch.decision":
					require.Len(t, s.Links, 2, "the retried node and the inserted one")
					require.Contains(t, s.Attributes, tracing.AttrPatch.String(capstan.PatchGID("p1")))
					require.Equal(t, ids.AttemptSpanID("acme", "op-1", "a", 1), s.Links[0].SpanContext.SpanID())
				}
			}
			require.Equal(t, c.spans, names)
		})
	}
	// The operation's end is the trace's root, from its start to its end.
	exp := tracetest.NewInMemoryExporter()
	tp := tracing.NewProvider(exp, false)
	o := *op
	o.Status, o.CompletedAt = capstan.OperationSucceeded, &t2
	ids.Committed(tp.Tracer("t"), "acme", &capstan.OperationChange{Operation: &o}, t2)
	spans := exp.GetSpans()
	require.Len(t, spans, 1)
	require.Equal(t, "operation", spans[0].Name)
	require.False(t, spans[0].Parent.IsValid())
	require.Equal(t, ids.OperationSpanID("acme", "op-1"), spans[0].SpanContext.SpanID())
	require.Equal(t, t0, spans[0].StartTime.UTC())
	require.Equal(t, t2, spans[0].EndTime.UTC())
}

func TestIdsAreStableAndDistinct(t *testing.T) {
	other := tracing.NewIDs([]byte("another deployment's secret key"))
	require.NotEqual(t, ids.TraceID("a", "op"), other.TraceID("a", "op"), "keyed: without the key, an operation's id does not give its trace")
	require.NotEqual(t, ids.AttemptSpanID("a", "op", "n", 1), other.AttemptSpanID("a", "op", "n", 1))
	require.Equal(t, ids.TraceID("a", "op"), ids.TraceID("a", "op"))
	require.NotEqual(t, ids.TraceID("a", "op"), ids.TraceID("b", "op"), "organizations do not share traces")
	require.NotEqual(t, ids.TraceID("a|b", "c"), ids.TraceID("a", "b|c"), "no ambiguity between parts")
	require.NotEqual(t, ids.AttemptSpanID("a", "op", "n", 1), ids.AttemptSpanID("a", "op", "n", 2))
	require.NotEqual(t, ids.AttemptSpanID("a", "op", "n", 1), ids.GateSpanID("a", "op", "n", 1))
	require.Regexp(t, `^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`, ids.Traceparent("a", "op", "n", 1))
}
