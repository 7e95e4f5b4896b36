// Package events gives each kind of timeline event a type of its own for
// GraphQL (docs/EVENTS.md): the typed event contract. An event is stored
// as capstan.OperationEvent (type, actor, payload); Of wraps it in the
// type its kind names, whose methods read the payload's fields typed.
// Kinds no type knows yet are Other: their payload still carries
// everything.
package events

import (
	"math"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
)

// Version is the contract's version (docs/EVENTS.md): it changes when a
// field changes meaning or type; new kinds and fields do not change it.
const Version = 1

// Event is any timeline event of the contract.
type Event interface {
	IsOperationEvent()
	Raw() *capstan.OperationEvent
}

type base struct{ capstan.OperationEvent }

func (base) IsOperationEvent()               {}
func (b *base) Raw() *capstan.OperationEvent { return &b.OperationEvent }
func (b *base) str(key string) *string       { return str(b.Payload[key]) }
func (b *base) integer(key string) *int      { return integer(b.Payload[key]) }
func (b *base) boolean(key string) *bool     { v, ok := b.Payload[key].(bool); return ptrIf(v, ok) }
func (b *base) suffix() string               { _, s, _ := strings.Cut(b.Type, "."); return s }
func (b *base) nodeID() string               { return deref(b.str("node")) }

// The event types, one per family of kinds.
type (
	// OperationStatusEvent: operation.* — the operation moved (or was created).
	OperationStatusEvent struct{ base }
	// NodeEvent: node.* — a node run moved.
	NodeEvent struct{ base }
	// GateEvent: gate.* — a gate waits, was decided, timed out, or an approval was invalidated.
	GateEvent struct{ base }
	// PatchEvent: patch.* — a PlanPatch was proposed, decided, applied, rejected, withdrawn or went stale.
	PatchEvent struct{ base }
	// PlanRevisedEvent: plan.revised — the operation's plan reached a new revision.
	PlanRevisedEvent struct{ base }
	// EvidenceEvent: evidence.recorded — a probe's result.
	EvidenceEvent struct{ base }
	// ResourceEvent: resource.* — the operation's resource changed lifecycle.
	ResourceEvent struct{ base }
	// BindingEvent: binding.* — a requirement got its provider (from a sub-operation).
	BindingEvent struct{ base }
	// InterventionEvent: intervention.recorded — a person acted on a node.
	InterventionEvent struct{ base }
	// AnalysisEvent: analysis.* — an analyzer's output was refused as a proposal.
	AnalysisEvent struct{ base }
	// SecretRevealedEvent: secret.revealed — a person saw a secret artifact's value.
	SecretRevealedEvent struct{ base }
	// OtherEvent: a kind this contract version has no type for.
	OtherEvent struct{ base }
)

// Of wraps a stored event in its type.
func Of(e capstan.OperationEvent) Event {
	b := base{e}
	family, _, _ := strings.Cut(e.Type, ".")
	switch {
	case family == "operation":
		return &OperationStatusEvent{b}
	case family == "node":
		return &NodeEvent{b}
	case family == "gate":
		return &GateEvent{b}
	case family == "patch":
		return &PatchEvent{b}
	case e.Type == "plan.revised":
		return &PlanRevisedEvent{b}
	case e.Type == "evidence.recorded":
		return &EvidenceEvent{b}
	case family == "resource":
		return &ResourceEvent{b}
	case family == "binding":
		return &BindingEvent{b}
	case e.Type == "intervention.recorded":
		return &InterventionEvent{b}
	case family == "analysis":
		return &AnalysisEvent{b}
	case e.Type == "secret.revealed":
		return &SecretRevealedEvent{b}
	}
	return &OtherEvent{b}
}

// OperationStatus is the operation's status the event reached (none for
// operation.created and other non-status kinds).
func (e *OperationStatusEvent) OperationStatus() *capstan.OperationStatus {
	s := capstan.OperationStatus(e.suffix())
	if !capstan.OperationStatuses.Valid(s) {
		return nil
	}
	return &s
}
func (e *OperationStatusEvent) Reason() *string     { return e.str("reason") }
func (e *OperationStatusEvent) FailedNode() *string { return e.str("node") }
func (e *OperationStatusEvent) Revision() *int      { return e.integer("revision") }
func (e *OperationStatusEvent) PlanID() string      { return deref(e.str("plan")) }
func (e *OperationStatusEvent) ParentID() string    { return deref(e.str("parent")) }

// Node is the node the event is about.
func (e *NodeEvent) Node() string { return e.nodeID() }

// RunStatus is the node run's status the event reached (none for kinds that
// are not a status: retry_requested, needs_attention, recovered, reset).
func (e *NodeEvent) RunStatus() *capstan.NodeRunStatus {
	s := capstan.NodeRunStatus(e.suffix())
	if !capstan.NodeRunStatuses.Valid(s) {
		return nil
	}
	return &s
}
func (e *NodeEvent) Attempt() *int   { return e.integer("attempt") }
func (e *NodeEvent) Revision() *int  { return e.integer("revision") }
func (e *NodeEvent) Reason() *string { return e.str("reason") }
func (e *NodeEvent) Wait() *string   { return e.str("wait") }
func (e *NodeEvent) ChildID() string { return deref(e.str("child")) }

// RunStatus is what a gate event moved the gate's node run to:
// gate.waiting to waiting_approval; a closing event (gate.approved,
// gate.rejected, gate.timed_out with its outcome) to succeeded or failed.
func (e *GateEvent) RunStatus() *capstan.NodeRunStatus {
	var s capstan.NodeRunStatus
	outcome := e.suffix()
	if outcome == "timed_out" {
		outcome = deref(e.str("outcome"))
	}
	switch outcome {
	case "waiting":
		s = capstan.NodeWaitingApproval
	case "approved":
		s = capstan.NodeSucceeded
	case "rejected":
		s = capstan.NodeFailed
	default:
		return nil
	}
	return &s
}

func (e *GateEvent) Node() string    { return e.nodeID() }
func (e *GateEvent) Approve() *bool  { return e.boolean("approve") }
func (e *GateEvent) Role() *string   { return e.str("role") }
func (e *GateEvent) Digest() *string { return e.str("digest") }

func (e *PatchEvent) PatchID() string { return deref(e.str("patch")) }
func (e *PatchEvent) Revision() *int  { return e.integer("revision") }
func (e *PatchEvent) Digest() *string { return e.str("digest") }
func (e *PatchEvent) Reason() *string { return e.str("reason") }

func (e *PlanRevisedEvent) Revision() int         { return deref(e.integer("revision")) }
func (e *PlanRevisedEvent) Digest() *string       { return e.str("digest") }
func (e *PlanRevisedEvent) ParentDigest() *string { return e.str("parent") }
func (e *PlanRevisedEvent) PatchID() string       { return deref(e.str("patch")) }

func (e *EvidenceEvent) Node() string { return e.nodeID() }
func (e *EvidenceEvent) Item() string { return deref(e.str("item")) }

// Result is the evidence result as recorded (passed, failed, inconclusive).
func (e *EvidenceEvent) Result() string { return deref(e.str("result")) }

func (e *ResourceEvent) ResourceKey() string { return deref(e.str("resource")) }
func (e *ResourceEvent) Lifecycle() *capstan.LifecycleStatus {
	return valid(e.str("lifecycle"), capstan.LifecycleStatuses.Valid)
}
func (e *ResourceEvent) Health() *capstan.HealthStatus {
	return valid(e.str("health"), capstan.ValidHealth)
}
func (e *ResourceEvent) Outcome() *capstan.OperationStatus {
	return valid(e.str("outcome"), capstan.OperationStatuses.Valid)
}
func (e *ResourceEvent) Reason() *string { return e.str("reason") }
func (e *ResourceEvent) PreviousHealth() *capstan.HealthStatus {
	return valid(e.str("previous"), capstan.ValidHealth)
}

// Diff is resource.assessed's drifted fields (nil for other kinds; an
// entry without a field name is left out).
func (e *ResourceEvent) Diff() []capstan.FieldDrift {
	list, ok := e.Payload["diff"].([]any)
	if !ok {
		return nil
	}
	out := []capstan.FieldDrift{}
	for _, item := range list {
		m, _ := item.(map[string]any)
		field, _ := m["field"].(string)
		if field == "" {
			continue
		}
		out = append(out, capstan.FieldDrift{Field: field, Desired: m["desired"], Observed: m["observed"]})
	}
	return out
}

func (e *BindingEvent) Binding() *string   { return e.str("binding") }
func (e *BindingEvent) ProviderID() string { return deref(e.str("resource")) }
func (e *BindingEvent) ChildID() string    { return deref(e.str("child")) }

func (e *InterventionEvent) Node() string              { return e.nodeID() }
func (e *InterventionEvent) InterventionType() *string { return e.str("type") }
func (e *InterventionEvent) Verify() []string          { return strs(e.Payload["verify"]) }

func (e *AnalysisEvent) Node() string       { return e.nodeID() }
func (e *AnalysisEvent) Diagnosis() *string { return e.str("diagnosis") }
func (e *AnalysisEvent) Problems() []string { return strs(e.Payload["problems"]) }

func (e *SecretRevealedEvent) Artifact() string    { return deref(e.str("artifact")) }
func (e *SecretRevealedEvent) Name() *string       { return e.str("name") }
func (e *SecretRevealedEvent) ProducedBy() *string { return e.str("produced_by") }
func (e *SecretRevealedEvent) Reason() *string     { return e.str("reason") }
func (e *SecretRevealedEvent) ExpiresAt() *time.Time {
	t, err := time.Parse(time.RFC3339, deref(e.str("expires_at")))
	return ptrIf(t, err == nil)
}

func str(v any) *string {
	s, ok := v.(string)
	if !ok || s == "" {
		return nil
	}
	return &s
}

// valid converts a raw string to a status type when ok says it is one.
func valid[S ~string](raw *string, ok func(S) bool) *S {
	if raw == nil || !ok(S(*raw)) {
		return nil
	}
	s := S(*raw)
	return &s
}

// integer reads a number however it was decoded (int, int64, float64,
// json.Number).
func integer(v any) *int {
	var n int
	switch v := v.(type) {
	case int:
		n = v
	case int64:
		n = int(v)
	case float64:
		if v != math.Trunc(v) {
			return nil
		}
		n = int(v)
	case interface{ Int64() (int64, error) }:
		i, err := v.Int64()
		if err != nil {
			return nil
		}
		n = int(i)
	default:
		return nil
	}
	return &n
}

func strs(v any) []string {
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func ptrIf[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
