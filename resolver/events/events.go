// Package events gives each kind of timeline event a type of its own for
// GraphQL (docs/EVENTS.md): the typed event contract. An event is stored
// as capstan.OperationEvent (type, actor, payload); Of wraps it in the
// type its kind names, whose methods read the payload's fields typed.
// Kinds no type knows yet are Other: their payload still carries
// everything.
package events

import (
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
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

// The accessors read the event's family type (package event, where the
// writers build it too): one definition of every field, from writer to
// reader. An empty value is null.

// OperationStatus is the operation's status the event reached (none for
// operation.created and other non-status kinds).
func (e *OperationStatusEvent) OperationStatus() *capstan.OperationStatus {
	ev, _ := event.OperationOf(e.OperationEvent)
	return valid(opt(ev.What), capstan.OperationStatuses.Valid)
}
func (e *OperationStatusEvent) typed() event.Operation {
	ev, _ := event.OperationOf(e.OperationEvent)
	return ev
}
func (e *OperationStatusEvent) Reason() *string     { return opt(e.typed().Reason) }
func (e *OperationStatusEvent) FailedNode() *string { return opt(e.typed().Node) }
func (e *OperationStatusEvent) Revision() *int      { return optInt(e.typed().Revision) }
func (e *OperationStatusEvent) PlanID() string      { return e.typed().Plan }
func (e *OperationStatusEvent) ParentID() string    { return e.typed().Parent }

func (e *NodeEvent) typed() event.Node { ev, _ := event.NodeOf(e.OperationEvent); return ev }

// Node is the node the event is about.
func (e *NodeEvent) Node() string { return e.typed().Node }

// RunStatus is the node run's status the event reached (none for kinds that
// are not a status: retry_requested, needs_attention, recovered, reset).
func (e *NodeEvent) RunStatus() *capstan.NodeRunStatus {
	return valid(opt(e.typed().What), capstan.NodeRunStatuses.Valid)
}
func (e *NodeEvent) Attempt() *int   { return optInt(e.typed().Attempt) }
func (e *NodeEvent) Revision() *int  { return optInt(e.typed().Revision) }
func (e *NodeEvent) Reason() *string { return opt(e.typed().Reason) }
func (e *NodeEvent) Wait() *string   { return opt(e.typed().Wait) }
func (e *NodeEvent) ChildID() string { return e.typed().Child }

func (e *GateEvent) typed() event.Gate { ev, _ := event.GateOf(e.OperationEvent); return ev }

// RunStatus is what a gate event moved the gate's node run to:
// gate.waiting to waiting_approval; a closing event (gate.approved,
// gate.rejected, gate.timed_out with its outcome) to succeeded or failed.
func (e *GateEvent) RunStatus() *capstan.NodeRunStatus {
	var s capstan.NodeRunStatus
	ev := e.typed()
	outcome := ev.What
	if outcome == "timed_out" {
		outcome = ev.Outcome
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

func (e *GateEvent) Node() string    { return e.typed().Node }
func (e *GateEvent) Approve() *bool  { return e.typed().Approve }
func (e *GateEvent) Role() *string   { return opt(e.typed().Role) }
func (e *GateEvent) Digest() *string { return opt(e.typed().Digest) }

func (e *PatchEvent) typed() event.Patch { ev, _ := event.PatchOf(e.OperationEvent); return ev }
func (e *PatchEvent) PatchID() string    { return e.typed().Patch }
func (e *PatchEvent) Revision() *int     { return optInt(e.typed().Revision) }
func (e *PatchEvent) Digest() *string    { return opt(e.typed().Digest) }
func (e *PatchEvent) Reason() *string    { return opt(e.typed().Reason) }

func (e *PlanRevisedEvent) typed() event.PlanRevised {
	ev, _ := event.PlanRevisedOf(e.OperationEvent)
	return ev
}
func (e *PlanRevisedEvent) Revision() int         { return e.typed().Revision }
func (e *PlanRevisedEvent) Digest() *string       { return opt(e.typed().Digest) }
func (e *PlanRevisedEvent) ParentDigest() *string { return opt(e.typed().Parent) }
func (e *PlanRevisedEvent) PatchID() string       { return e.typed().Patch }

func (e *EvidenceEvent) typed() event.Evidence {
	ev, _ := event.EvidenceOf(e.OperationEvent)
	return ev
}
func (e *EvidenceEvent) Node() string { return e.typed().Node }
func (e *EvidenceEvent) Item() string { return e.typed().Item }

// Result is the evidence result as recorded (passed, failed, inconclusive).
func (e *EvidenceEvent) Result() string { return e.typed().Result }

func (e *ResourceEvent) typed() event.Resource {
	ev, _ := event.ResourceOf(e.OperationEvent)
	return ev
}
func (e *ResourceEvent) ResourceKey() string { return e.typed().Resource }
func (e *ResourceEvent) Lifecycle() *capstan.LifecycleStatus {
	return valid(opt(e.typed().Lifecycle), capstan.LifecycleStatuses.Valid)
}
func (e *ResourceEvent) Health() *capstan.HealthStatus {
	return valid(opt(e.typed().Health), capstan.ValidHealth)
}
func (e *ResourceEvent) Outcome() *capstan.OperationStatus {
	return valid(opt(e.typed().Outcome), capstan.OperationStatuses.Valid)
}
func (e *ResourceEvent) Reason() *string { return opt(e.typed().Reason) }
func (e *ResourceEvent) PreviousHealth() *capstan.HealthStatus {
	return valid(opt(e.typed().Previous), capstan.ValidHealth)
}

// Diff is resource.assessed's drifted fields (nil for other kinds; an
// entry without a field name is left out).
func (e *ResourceEvent) Diff() []capstan.FieldDrift {
	if e.typed().What != "assessed" {
		return nil
	}
	d := e.typed().Diff
	if d == nil {
		d = []capstan.FieldDrift{}
	}
	return d
}

func (e *BindingEvent) typed() event.Binding { ev, _ := event.BindingOf(e.OperationEvent); return ev }
func (e *BindingEvent) Binding() *string     { return opt(e.typed().Binding) }
func (e *BindingEvent) ProviderID() string   { return e.typed().Resource }
func (e *BindingEvent) ChildID() string      { return e.typed().Child }

func (e *InterventionEvent) typed() event.Intervention {
	ev, _ := event.InterventionOf(e.OperationEvent)
	return ev
}
func (e *InterventionEvent) Node() string              { return e.typed().Node }
func (e *InterventionEvent) InterventionType() *string { return opt(e.typed().Type) }
func (e *InterventionEvent) Verify() []string          { return e.typed().Verify }

func (e *AnalysisEvent) typed() event.Analysis {
	ev, _ := event.AnalysisOf(e.OperationEvent)
	return ev
}
func (e *AnalysisEvent) Node() string       { return e.typed().Node }
func (e *AnalysisEvent) Diagnosis() *string { return opt(e.typed().Diagnosis) }
func (e *AnalysisEvent) Problems() []string { return e.typed().Problems }

func (e *SecretRevealedEvent) typed() event.SecretRevealed {
	ev, _ := event.SecretRevealedOf(e.OperationEvent)
	return ev
}
func (e *SecretRevealedEvent) Artifact() string    { return e.typed().Artifact }
func (e *SecretRevealedEvent) Name() *string       { return opt(e.typed().Name) }
func (e *SecretRevealedEvent) ProducedBy() *string { return opt(e.typed().ProducedBy) }
func (e *SecretRevealedEvent) Reason() *string     { return opt(e.typed().Reason) }
func (e *SecretRevealedEvent) ExpiresAt() *time.Time {
	t, err := time.Parse(time.RFC3339, e.typed().ExpiresAt)
	return ptrIf(t, err == nil)
}

// opt is s, or nil when empty; optInt is n, or nil when 0 (none of the
// counts an event carries starts at 0).
func opt(s string) *string { return ptrIf(s, s != "") }
func optInt(n int) *int    { return ptrIf(n, n != 0) }

// valid converts a raw string to a status type when ok says it is one.
func valid[S ~string](raw *string, ok func(S) bool) *S {
	if raw == nil || !ok(S(*raw)) {
		return nil
	}
	s := S(*raw)
	return &s
}

func ptrIf[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}
