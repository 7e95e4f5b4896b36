package executor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/tracing"
)

// TestAnOperationIsOneTrace runs a job, a gate and a job with an
// in-memory exporter: the operation's span, each node attempt's and the
// gate's wait share the trace id derived from the operation, the nodes'
// parent is the operation's span, and the job's command saw a
// TRACEPARENT.
func TestAnOperationIsOneTrace(t *testing.T) {
	org = testenv.NewOrg()
	exp := tracetest.NewInMemoryExporter()
	tp := tracing.NewProvider(exp, false)
	traceIDs := tracing.NewIDs([]byte("the tests' secret key"))
	store := tracing.Store{Store: testenv.Store(t), Provider: tp, IDs: traceIDs}
	svc, _ := setup(t, store, org, func(c *executor.Config) { c.TraceIDs = traceIDs })
	job := func(id string) capstan.PlanNode {
		return capstan.PlanNode{ID: id, Type: capstan.NodeJob, Title: id, Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"},
			Outputs: capstan.JobOutputs{Evidence: []capstan.Probe{{Name: "traced", Type: "command", Script: `echo "$TRACEPARENT"`, OutputPattern: `^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`}}}}}
	}
	nodes := []capstan.PlanNode{job("build"),
		{ID: "gate", Type: capstan.NodeGate, Title: "gate", Gate: &capstan.GateSpec{Type: "approval", Reason: "trace", RequiredRoles: []string{capstan.RoleSRE}}},
		job("deploy")}
	plan := readyPlan(t, store, nodes, []capstan.Edge{{From: "build", To: "gate"}, {From: "gate", To: "deploy"}})
	op, err := svc.StartOperation(as("alice", capstan.RoleAdmin), plan.ID, "")
	require.NoError(t, err)
	waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })
	_, err = svc.DecideGate(as("bob", capstan.RoleSRE), op.ID, "gate", true, "ok")
	require.NoError(t, err)
	done := waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
	require.Equal(t, capstan.OperationSucceeded, done.Status, "the command probes saw a TRACEPARENT")
	// The spans of a commit are made once it returned: a reader of the
	// store may see the operation end first.
	require.Eventually(t, func() bool {
		require.NoError(t, tp.ForceFlush(context.Background()))
		for _, s := range exp.GetSpans() {
			if s.Name == "operation" {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "the operation's span")

	traceID := traceIDs.TraceID(org, op.ID)
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		require.Equal(t, traceID, s.SpanContext.TraceID(), "%s is in the operation's trace", s.Name)
		byName[s.Name] = append(byName[s.Name], s)
	}
	require.Len(t, byName["operation"], 1)
	opSpan := byName["operation"][0]
	require.Equal(t, traceIDs.OperationSpanID(org, op.ID), opSpan.SpanContext.SpanID())
	require.False(t, opSpan.Parent.IsValid(), "the operation's span is the root")
	attempts := map[string]tracetest.SpanStub{}
	for _, s := range byName["node.attempt"] {
		node := attr(s, tracing.AttrNode)
		attempts[node] = s
		require.Equal(t, traceIDs.OperationSpanID(org, op.ID), s.Parent.SpanID(), "a node's parent is the operation")
		require.Equal(t, traceIDs.AttemptSpanID(org, op.ID, node, 1), s.SpanContext.SpanID(), "the id its job's TRACEPARENT named")
		require.False(t, s.StartTime.After(s.EndTime))
	}
	require.Contains(t, attempts, "build")
	require.Contains(t, attempts, "deploy")
	require.Len(t, byName["gate.wait"], 1)
	gate := byName["gate.wait"][0]
	require.Equal(t, "gate", attr(gate, tracing.AttrNode))
	require.Equal(t, "approved", attr(gate, tracing.AttrDecision))
	require.Equal(t, traceIDs.OperationSpanID(org, op.ID), gate.Parent.SpanID())
	require.Equal(t, "00-"+traceID.String()+"-"+traceIDs.AttemptSpanID(org, op.ID, "build", 1).String()+"-01", traceIDs.Traceparent(org, op.ID, "build", 1))
}

// attr is a span's attribute k, as a string.
func attr(s tracetest.SpanStub, k attribute.Key) string {
	for _, a := range s.Attributes {
		if a.Key == k {
			return a.Value.Emit()
		}
	}
	return ""
}
