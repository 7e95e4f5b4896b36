package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// Store emits the spans a committed operation change ends, whoever
// commits it (the executor's steps, a gate decision, a patch decision):
// a node attempt's span when the attempt ends, a gate's wait when it is
// decided, a patch decision (linked to the attempts of the nodes it
// changes), and the operation's span when it ends. Each carries the times
// the records hold and the ids derived from the operation, so one
// operation is one trace across restarts and replicas.
type Store struct {
	capstan.Store
	// Provider receives the spans; nil: the global one (OpenTelemetry's
	// no-op provider unless tracing was started).
	Provider trace.TracerProvider
	// IDs derives the spans' ids (the executor gives jobs the same).
	IDs IDs
}

// ApplyOperationChange implements capstan.Store.
func (s Store) ApplyOperationChange(ctx context.Context, org string, ch *capstan.OperationChange) error {
	if err := s.Store.ApplyOperationChange(ctx, org, ch); err != nil {
		return err
	}
	tp := s.Provider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	s.IDs.Committed(tp.Tracer("github.com/capstan-dev/capstan"), org, ch, time.Now())
	return nil
}

// attemptEnded reports whether a run's status ends an attempt of its node.
func attemptEnded(s capstan.NodeRunStatus) bool {
	switch s {
	case capstan.NodeSucceeded, capstan.NodeFailed, capstan.NodeRetrying, capstan.NodeWaitingIntervention, capstan.NodeRolledBack, capstan.NodeCancelled, capstan.NodeSkipped:
		return true
	}
	return false
}

// Committed emits the spans ch ends, committed at now.
func (k IDs) Committed(tr trace.Tracer, org string, ch *capstan.OperationChange, now time.Time) {
	op := ch.Operation
	parent := k.InOperation(context.Background(), org, op.ID)
	traceID := k.TraceID(org, op.ID)
	gates := map[string]bool{}
	for _, g := range ch.Gates {
		gates[g.NodeID] = g.Status != "waiting"
	}
	for _, r := range ch.NodeRuns {
		if r.StartedAt == nil || !attemptEnded(r.Status) {
			continue
		}
		end := now
		if r.FinishedAt != nil && r.FinishedAt.After(*r.StartedAt) {
			end = *r.FinishedAt
		}
		name, id := "node.attempt", k.AttemptSpanID(org, op.ID, r.NodeID, r.Attempts)
		decided, gate := gates[r.NodeID]
		if gate {
			if !decided {
				continue
			}
			name, id = "gate.wait", k.GateSpanID(org, op.ID, r.NodeID, r.Attempts)
		}
		_, span := tr.Start(WithSpanID(parent, traceID, id), name, trace.WithTimestamp(*r.StartedAt), trace.WithAttributes(
			AttrOrganization.String(org), AttrOperation.String(capstan.OperationGID(op.ID)), AttrNode.String(r.NodeID),
			AttrAttempt.Int(r.Attempts), AttrStatus.String(string(r.Status))))
		if gate {
			span.SetAttributes(AttrDecision.String(map[bool]string{true: "approved", false: "rejected"}[r.Status == capstan.NodeSucceeded]))
		}
		if r.Error != "" && r.Status != capstan.NodeSucceeded {
			span.SetAttributes(AttrError.String(r.Error))
			span.SetStatus(codes.Error, r.Error)
		}
		span.End(trace.WithTimestamp(end))
	}
	k.patchDecisions(tr, parent, org, ch, now)
	if !op.Status.Terminal() {
		return
	}
	start, end := op.CreatedAt, now
	if op.StartedAt != nil {
		start = *op.StartedAt
	}
	if op.CompletedAt != nil && op.CompletedAt.After(start) {
		end = *op.CompletedAt
	}
	ctx := WithSpanID(context.Background(), traceID, k.OperationSpanID(org, op.ID))
	_, span := tr.Start(ctx, "operation", trace.WithNewRoot(), trace.WithTimestamp(start), trace.WithAttributes(
		AttrOrganization.String(org), AttrOperation.String(capstan.OperationGID(op.ID)), AttrStatus.String(string(op.Status))))
	if op.Status != capstan.OperationSucceeded {
		span.SetStatus(codes.Error, string(op.Status))
	}
	span.End(trace.WithTimestamp(end))
}

// patchDecisions emits a span for each patch decision ch records (its
// patch.decided events), linked to the attempts of the nodes the patch
// changes.
func (k IDs) patchDecisions(tr trace.Tracer, parent context.Context, org string, ch *capstan.OperationChange, now time.Time) {
	decided := map[string]bool{}
	for _, e := range ch.Events {
		if p, ok := event.PatchOf(e); ok && p.What == "decided" {
			decided[p.Patch] = true
		}
	}
	attempts := map[string]int{}
	for _, r := range ch.NodeRuns {
		attempts[r.NodeID] = r.Attempts
	}
	for _, p := range ch.Patches {
		if !decided[capstan.PatchGID(p.ID)] || len(p.Decisions) == 0 {
			continue
		}
		d := p.Decisions[len(p.Decisions)-1]
		var links []trace.Link
		linked := map[string]bool{}
		for _, c := range p.Changes {
			for _, node := range []string{c.Node, c.NewNodeID()} {
				if node != "" && !linked[node] && len(links) < 32 {
					linked[node] = true
					links = append(links, k.LinkToAttempt(org, ch.Operation.ID, node, max(1, attempts[node])))
				}
			}
		}
		_, span := tr.Start(parent, "patch.decision", trace.WithTimestamp(d.At), trace.WithLinks(links...), trace.WithAttributes(
			AttrOrganization.String(org), AttrOperation.String(capstan.OperationGID(ch.Operation.ID)), AttrPatch.String(capstan.PatchGID(p.ID)), AttrActor.String(d.Actor),
			AttrDecision.String(map[bool]string{true: "approved", false: "rejected"}[d.Approve]), AttrStatus.String(string(p.Status))))
		span.End(trace.WithTimestamp(now))
	}
}
