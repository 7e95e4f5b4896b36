// Package tracing gives an operation one OpenTelemetry trace for its
// whole life, however many restarts and replicas it crosses: the trace id
// and the span ids are derived, with a key the replicas share (IDs), from
// the operation's id (and its nodes' ids and attempts), and spans are emitted from what was committed — the
// operation's span when it ends, a node attempt's when it ends, a gate's
// wait when it is decided — with the times the records hold. A job
// receives its attempt's span as TRACEPARENT before the span is emitted.
//
// Off by default: without an OTLP endpoint the global provider is
// OpenTelemetry's no-op one and nothing is exported.
package tracing

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys, one name on every span (docs/OPERATIONS.md).
const (
	AttrOrganization = attribute.Key("capstan.organization")
	// AttrOperation and AttrPatch are global ids: what the API's
	// operation(id:) and the patch mutations accept, pasted from a trace.
	AttrOperation = attribute.Key("capstan.operation.id")
	AttrStatus    = attribute.Key("capstan.status")
	AttrNode      = attribute.Key("capstan.node.id")
	AttrNodeType  = attribute.Key("capstan.node.type")
	AttrAttempt   = attribute.Key("capstan.node.attempt")
	AttrError     = attribute.Key("capstan.error")
	AttrPatch     = attribute.Key("capstan.patch.id")
	AttrActor     = attribute.Key("capstan.actor")
	AttrDecision  = attribute.Key("capstan.decision")
)

// IDs derives an operation's trace and span ids with a key: the same on
// every replica and across restarts (the key is derived from the secret
// key they share), and not computable from an operation's public id by
// anyone without it — a client cannot aim spans at an operation's trace
// or read one trace from another's ids.
type IDs struct {
	key [sha256.Size]byte // an array: a Store holding IDs stays comparable
}

// NewIDs keys the ids with a deployment's secret key (the secret
// store's): the key is never used as it is, only through HMAC-SHA256 of
// a label of its own.
func NewIDs(secretKey []byte) IDs {
	m := hmac.New(sha256.New, secretKey)
	m.Write([]byte("capstan/trace-ids/v1"))
	var ids IDs
	copy(ids.key[:], m.Sum(nil))
	return ids
}

func (k IDs) derive(parts ...string) [32]byte {
	h := hmac.New(sha256.New, k.key[:])
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// TraceID is the operation's trace id.
func (k IDs) TraceID(org, op string) trace.TraceID {
	var id trace.TraceID
	d := k.derive("capstan/trace", org, op)
	copy(id[:], d[:16])
	return id
}

// spanID is the span id derived from parts.
func (k IDs) spanID(parts ...string) trace.SpanID {
	var id trace.SpanID
	d := k.derive(parts...)
	copy(id[:], d[:8])
	return id
}

// OperationSpanID is the id of the operation's own span, every node's
// parent.
func (k IDs) OperationSpanID(org, op string) trace.SpanID {
	return k.spanID("capstan/operation", org, op)
}

// AttemptSpanID is the id of a node attempt's span.
func (k IDs) AttemptSpanID(org, op, node string, attempt int) trace.SpanID {
	return k.spanID("capstan/attempt", org, op, node, fmt.Sprint(attempt))
}

// GateSpanID is the id of a gate wait's span (one per decision).
func (k IDs) GateSpanID(org, op, node string, attempt int) trace.SpanID {
	return k.spanID("capstan/gate", org, op, node, fmt.Sprint(attempt))
}

// Traceparent is the W3C traceparent of a node attempt: what its job
// receives as TRACEPARENT.
func (k IDs) Traceparent(org, op, node string, attempt int) string {
	return fmt.Sprintf("00-%s-%s-01", k.TraceID(org, op), k.AttemptSpanID(org, op, node, attempt))
}

// InOperation returns ctx with the operation's span as the (remote)
// parent: spans started under it belong to the operation's trace.
func (k IDs) InOperation(ctx context.Context, org, op string) context.Context {
	return trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: k.TraceID(org, op), SpanID: k.OperationSpanID(org, op), TraceFlags: trace.FlagsSampled, Remote: true}))
}

// LinkToAttempt links a span to a node attempt's span.
func (k IDs) LinkToAttempt(org, op, node string, attempt int) trace.Link {
	return trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: k.TraceID(org, op), SpanID: k.AttemptSpanID(org, op, node, attempt), TraceFlags: trace.FlagsSampled, Remote: true})}
}

type idsKey struct{}

type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

// WithSpanID makes the next span started with ctx take id (and, for a
// span without a parent, the trace id tr): how a span emitted after a
// restart gets the ids its children were given before.
func WithSpanID(ctx context.Context, tr trace.TraceID, id trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, ids{trace: tr, span: id})
}

// IDGenerator gives spans the ids WithSpanID asks for, random ones
// otherwise. The providers NewProvider makes use it.
type IDGenerator struct{}

var _ sdktrace.IDGenerator = IDGenerator{}

// NewIDs implements sdktrace.IDGenerator.
func (IDGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if v, ok := ctx.Value(idsKey{}).(ids); ok && v.trace.IsValid() && v.span.IsValid() {
		return v.trace, v.span
	}
	var t trace.TraceID
	var s trace.SpanID
	_, _ = rand.Read(t[:])
	_, _ = rand.Read(s[:])
	return t, s
}

// NewSpanID implements sdktrace.IDGenerator.
func (IDGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if v, ok := ctx.Value(idsKey{}).(ids); ok && v.span.IsValid() {
		return v.span
	}
	var s trace.SpanID
	_, _ = rand.Read(s[:])
	return s
}
