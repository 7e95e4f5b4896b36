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
	OperationStatusEvent struct {
		base
		ev event.Operation
	}
	// NodeEvent: node.* — a node run moved.
	NodeEvent struct {
		base
		ev event.Node
	}
	// GateEvent: gate.* — a gate waits, was decided, timed out, or an approval was invalidated.
	GateEvent struct {
		base
		ev event.Gate
	}
	// PatchEvent: patch.* — a PlanPatch was proposed, decided, applied, rejected, withdrawn or went stale.
	PatchEvent struct {
		base
		ev event.Patch
	}
	// PlanRevisedEvent: plan.revised — the operation's plan reached a new revision.
	PlanRevisedEvent struct {
		base
		ev event.PlanRevised
	}
	// EvidenceEvent: evidence.recorded — a probe's result.
	EvidenceEvent struct {
		base
		ev event.Evidence
	}
	// ResourceEvent: resource.* — the operation's resource changed lifecycle.
	ResourceEvent struct {
		base
		ev event.Resource
	}
	// BindingEvent: binding.* — a requirement got its provider (from a sub-operation).
	BindingEvent struct {
		base
		ev event.Binding
	}
	// InterventionEvent: intervention.recorded — a person acted on a node.
	InterventionEvent struct {
		base
		ev event.Intervention
	}
	// AnalysisEvent: analysis.* — an analyzer's output was refused as a
	// proposal, or the analysis gave nothing to propose.
	AnalysisEvent struct {
		base
		ev event.Analysis
	}
	// SecretRevealedEvent: secret.revealed — a person saw a secret artifact's value.
	SecretRevealedEvent struct {
		base
		ev event.SecretRevealed
	}
	// OtherEvent: a kind this contract version has no type for.
	OtherEvent struct{ base }
)

// Of wraps a stored event in its type.
func Of(e capstan.OperationEvent) Event {
	b := base{e}
	family, _, _ := strings.Cut(e.Type, ".")
	switch {
	case family == "operation":
		ev, _ := event.OperationOf(e)
		return &OperationStatusEvent{b, ev}
	case family == "node":
		ev, _ := event.NodeOf(e)
		return &NodeEvent{b, ev}
	case family == "gate":
		ev, _ := event.GateOf(e)
		return &GateEvent{b, ev}
	case family == "patch":
		ev, _ := event.PatchOf(e)
		return &PatchEvent{b, ev}
	case e.Type == "plan.revised":
		ev, _ := event.PlanRevisedOf(e)
		return &PlanRevisedEvent{b, ev}
	case e.Type == "evidence.recorded":
		ev, _ := event.EvidenceOf(e)
		return &EvidenceEvent{b, ev}
	case family == "resource":
		ev, _ := event.ResourceOf(e)
		return &ResourceEvent{b, ev}
	case family == "binding":
		ev, _ := event.BindingOf(e)
		return &BindingEvent{b, ev}
	case e.Type == "intervention.recorded":
		ev, _ := event.InterventionOf(e)
		return &InterventionEvent{b, ev}
	case family == "analysis":
		ev, _ := event.AnalysisOf(e)
		return &AnalysisEvent{b, ev}
	case e.Type == "secret.revealed":
		ev, _ := event.SecretRevealedOf(e)
		return &SecretRevealedEvent{b, ev}
	}
	return &OtherEvent{b}
}

// The accessors read the event's family type (package event, where the
// writers build it too): one definition of every field, from writer to
// reader. An empty value is null.

// OperationStatus is the operation's status the event reached (none for
// operation.created and other non-status kinds).
func (e *OperationStatusEvent) OperationStatus() *capstan.OperationStatus {
	return valid(opt(e.ev.What), capstan.OperationStatuses.Valid)
}
func (e *OperationStatusEvent) Reason() *string     { return opt(e.ev.Reason) }
func (e *OperationStatusEvent) FailedNode() *string { return opt(e.ev.Node) }
func (e *OperationStatusEvent) Revision() *int      { return optInt(e.ev.Revision) }
func (e *OperationStatusEvent) PlanID() string      { return e.ev.Plan }
func (e *OperationStatusEvent) ParentID() string    { return e.ev.Parent }

// Node is the node the event is about.
func (e *NodeEvent) Node() string { return e.ev.Node }

// RunStatus is the node run's status the event reached (none for kinds that
// are not a status: retry_requested, needs_attention, recovered, reset).
func (e *NodeEvent) RunStatus() *capstan.NodeRunStatus {
	return valid(opt(e.ev.What), capstan.NodeRunStatuses.Valid)
}
func (e *NodeEvent) Attempt() *int   { return optInt(e.ev.Attempt) }
func (e *NodeEvent) Revision() *int  { return optInt(e.ev.Revision) }
func (e *NodeEvent) Reason() *string { return opt(e.ev.Reason) }
func (e *NodeEvent) Wait() *string   { return opt(e.ev.Wait) }
func (e *NodeEvent) ChildID() string { return e.ev.Child }

// RunStatus is what a gate event moved the gate's node run to:
// gate.waiting to waiting_approval; a closing event (gate.approved,
// gate.rejected, gate.timed_out with its outcome) to succeeded or failed.
func (e *GateEvent) RunStatus() *capstan.NodeRunStatus {
	var s capstan.NodeRunStatus
	outcome := e.ev.What
	if outcome == "timed_out" {
		outcome = e.ev.Outcome
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

func (e *GateEvent) Node() string    { return e.ev.Node }
func (e *GateEvent) Approve() *bool  { return e.ev.Approve }
func (e *GateEvent) Role() *string   { return opt(e.ev.Role) }
func (e *GateEvent) Digest() *string { return opt(e.ev.Digest) }

func (e *PatchEvent) PatchID() string { return e.ev.Patch }
func (e *PatchEvent) Revision() *int  { return optInt(e.ev.Revision) }
func (e *PatchEvent) Digest() *string { return opt(e.ev.Digest) }
func (e *PatchEvent) Reason() *string { return opt(e.ev.Reason) }

func (e *PlanRevisedEvent) Revision() int         { return e.ev.Revision }
func (e *PlanRevisedEvent) Digest() *string       { return opt(e.ev.Digest) }
func (e *PlanRevisedEvent) ParentDigest() *string { return opt(e.ev.Parent) }
func (e *PlanRevisedEvent) PatchID() string       { return e.ev.Patch }

func (e *EvidenceEvent) Node() string { return e.ev.Node }
func (e *EvidenceEvent) Item() string { return e.ev.Item }

// Result is the evidence result as recorded (passed, failed, inconclusive).
func (e *EvidenceEvent) Result() string { return e.ev.Result }

func (e *ResourceEvent) ResourceKey() string { return e.ev.Resource }
func (e *ResourceEvent) Lifecycle() *capstan.LifecycleStatus {
	return valid(opt(e.ev.Lifecycle), capstan.LifecycleStatuses.Valid)
}
func (e *ResourceEvent) Health() *capstan.HealthStatus {
	return valid(opt(e.ev.Health), capstan.ValidHealth)
}
func (e *ResourceEvent) Outcome() *capstan.OperationStatus {
	return valid(opt(e.ev.Outcome), capstan.OperationStatuses.Valid)
}
func (e *ResourceEvent) Reason() *string { return opt(e.ev.Reason) }
func (e *ResourceEvent) PreviousHealth() *capstan.HealthStatus {
	return valid(opt(e.ev.Previous), capstan.ValidHealth)
}

// Diff is resource.assessed's drifted fields (nil for other kinds; an
// entry without a field name is left out).
func (e *ResourceEvent) Diff() []capstan.FieldDrift {
	if e.ev.What != "assessed" {
		return nil
	}
	d := e.ev.Diff
	if d == nil {
		d = []capstan.FieldDrift{}
	}
	return d
}

func (e *BindingEvent) Binding() *string   { return opt(e.ev.Binding) }
func (e *BindingEvent) ProviderID() string { return e.ev.Resource }
func (e *BindingEvent) ChildID() string    { return e.ev.Child }

func (e *InterventionEvent) Node() string              { return e.ev.Node }
func (e *InterventionEvent) InterventionType() *string { return opt(e.ev.Type) }
func (e *InterventionEvent) Verify() []string          { return e.ev.Verify }

func (e *AnalysisEvent) Node() string       { return e.ev.Node }
func (e *AnalysisEvent) Diagnosis() *string { return opt(e.ev.Diagnosis) }
func (e *AnalysisEvent) Problems() []string { return e.ev.Problems }

func (e *SecretRevealedEvent) Artifact() string    { return e.ev.Artifact }
func (e *SecretRevealedEvent) Name() *string       { return opt(e.ev.Name) }
func (e *SecretRevealedEvent) ProducedBy() *string { return opt(e.ev.ProducedBy) }
func (e *SecretRevealedEvent) Reason() *string     { return opt(e.ev.Reason) }
func (e *SecretRevealedEvent) ExpiresAt() *time.Time {
	t, err := time.Parse(time.RFC3339, e.ev.ExpiresAt)
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
