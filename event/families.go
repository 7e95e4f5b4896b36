package event

import (
	"github.com/capstan-dev/capstan"
)

// Operation is operation.*: the operation was created or moved.
type Operation struct {
	What   string // created, running, waiting, succeeded, failed, cancelling, cancelled, rolling_back, rolled_back, needs_attention
	Node   string // the node that failed or asks for attention
	Reason string
	Plan   string // created: the plan's global id
	Parent string // created: the parent operation's global id
	// Revision is the plan revision it was created on.
	Revision int
}

// OperationMoved is the event of an operation reaching status s.
func OperationMoved(s capstan.OperationStatus) Operation { return Operation{What: string(s)} }

func (e Operation) Kind() string { return "operation." + e.What }
func (e Operation) Payload() map[string]any {
	return payload{}.str("node", e.Node).str("reason", e.Reason).str("plan", e.Plan).num("revision", e.Revision).str("parent", e.Parent).out()
}

// OperationOf reads an operation.* event.
func OperationOf(e capstan.OperationEvent) (Operation, bool) {
	p := e.Payload
	return Operation{What: what(e.Type), Node: str(p, "node"), Reason: str(p, "reason"), Plan: str(p, "plan"), Revision: num(p, "revision"),
		Parent: str(p, "parent")}, Family(e.Type) == "operation"
}

// Node is node.*: a node run moved, or was asked or told something.
type Node struct {
	What     string // a run status (running, succeeded, failed, retrying …), retry_requested, needs_attention, recovered, reset
	Node     string
	Attempt  int
	Revision int // the plan revision the run started on
	Reason   string
	Wait     string // retrying: the wait before the next attempt
	Child    string // sub_operation: the child operation's global id
}

func (e Node) Kind() string { return "node." + e.What }
func (e Node) Payload() map[string]any {
	return payload{"node": e.Node}.num("attempt", e.Attempt).num("revision", e.Revision).str("reason", e.Reason).str("wait", e.Wait).str("child", e.Child).out()
}

// NodeOf reads a node.* event.
func NodeOf(e capstan.OperationEvent) (Node, bool) {
	p := e.Payload
	return Node{What: what(e.Type), Node: str(p, "node"), Attempt: num(p, "attempt"), Revision: num(p, "revision"), Reason: str(p, "reason"),
		Wait: str(p, "wait"), Child: str(p, "child")}, Family(e.Type) == "node"
}

// Gate is gate.*: a gate waits, was decided, closed, timed out, or its
// approvals were dismissed.
type Gate struct {
	What    string // waiting, decided, approved, rejected, timed_out, approval_invalidated
	Node    string
	Roles   []string // waiting: the roles that may decide
	Approve *bool    // decided
	Role    string   // decided: the role the decider acted with
	Digest  string   // decided: the upstream digest the decision bound to; approval_invalidated: the new one
	After   string   // timed_out: the timeout
	Outcome string   // timed_out: approved or rejected
	Actors  []string // approval_invalidated: whose approvals were dismissed
	// Revision is the plan revision that dismissed them.
	Revision int
}

func (e Gate) Kind() string { return "gate." + e.What }
func (e Gate) Payload() map[string]any {
	return payload{"node": e.Node}.strs("roles", e.Roles).flag("approve", e.Approve).str("role", e.Role).str("digest", e.Digest).
		str("after", e.After).str("outcome", e.Outcome).strs("actors", e.Actors).num("revision", e.Revision).out()
}

// GateOf reads a gate.* event.
func GateOf(e capstan.OperationEvent) (Gate, bool) {
	p := e.Payload
	return Gate{What: what(e.Type), Node: str(p, "node"), Roles: strs(p, "roles"), Approve: flag(p, "approve"), Role: str(p, "role"),
		Digest: str(p, "digest"), After: str(p, "after"), Outcome: str(p, "outcome"), Actors: strs(p, "actors"), Revision: num(p, "revision")}, Family(e.Type) == "gate"
}

// Patch is patch.*: a PlanPatch was proposed, decided, applied,
// rejected, withdrawn or went stale.
type Patch struct {
	What         string
	Patch        string // the patch's global id
	Digest       string
	Reason       string
	Approve      *bool    // decided
	Revision     int      // applied: the revision it made
	BaseRevision int      // proposed
	Changes      int      // proposed: how many
	Approvals    []string // proposed: the approval rules it needs
}

func (e Patch) Kind() string { return "patch." + e.What }
func (e Patch) Payload() map[string]any {
	return payload{"patch": e.Patch}.str("digest", e.Digest).str("reason", e.Reason).flag("approve", e.Approve).num("revision", e.Revision).
		num("base_revision", e.BaseRevision).num("changes", e.Changes).strs("approvals", e.Approvals).out()
}

// PatchOf reads a patch.* event.
func PatchOf(e capstan.OperationEvent) (Patch, bool) {
	p := e.Payload
	return Patch{What: what(e.Type), Patch: str(p, "patch"), Digest: str(p, "digest"), Reason: str(p, "reason"), Approve: flag(p, "approve"),
		Revision: num(p, "revision"), BaseRevision: num(p, "base_revision"), Changes: num(p, "changes"), Approvals: strs(p, "approvals")}, Family(e.Type) == "patch"
}

// PlanRevised is plan.revised: the operation's plan reached a new revision.
type PlanRevised struct {
	Revision int
	Digest   string
	Parent   string // the digest of the revision before
	Patch    string // the global id of the patch that made it
}

func (e PlanRevised) Kind() string { return "plan.revised" }
func (e PlanRevised) Payload() map[string]any {
	return payload{"revision": e.Revision}.str("digest", e.Digest).str("parent", e.Parent).str("patch", e.Patch).out()
}

// PlanRevisedOf reads a plan.revised event.
func PlanRevisedOf(e capstan.OperationEvent) (PlanRevised, bool) {
	p := e.Payload
	return PlanRevised{Revision: num(p, "revision"), Digest: str(p, "digest"), Parent: str(p, "parent"), Patch: str(p, "patch")}, e.Type == "plan.revised"
}

// Evidence is evidence.recorded: a probe's result.
type Evidence struct{ Node, Item, Result string }

func (e Evidence) Kind() string { return "evidence.recorded" }
func (e Evidence) Payload() map[string]any {
	return payload{"node": e.Node, "item": e.Item, "result": e.Result}
}

// EvidenceOf reads an evidence.recorded event.
func EvidenceOf(e capstan.OperationEvent) (Evidence, bool) {
	p := e.Payload
	return Evidence{Node: str(p, "node"), Item: str(p, "item"), Result: str(p, "result")}, e.Type == "evidence.recorded"
}

// Resource is resource.*: the operation's resource changed lifecycle, or
// was assessed after the operation.
type Resource struct {
	What      string // changing, concluded, lifecycle_kept, attribute_unfilled, assessed
	Resource  string // its key
	Lifecycle string
	Health    string
	Outcome   string // concluded: the operation's status
	Reason    string
	Previous  string // assessed: the health before
	Diff      []capstan.FieldDrift
	// DesiredState is what a concluded operation made the resource hold.
	DesiredState map[string]any
}

func (e Resource) Kind() string { return "resource." + e.What }
func (e Resource) Payload() map[string]any {
	p := payload{"resource": e.Resource}.str("lifecycle", e.Lifecycle).str("health", e.Health).str("outcome", e.Outcome).str("reason", e.Reason).
		str("previous", e.Previous)
	if len(e.Diff) > 0 {
		diff := make([]any, 0, len(e.Diff))
		for _, d := range e.Diff {
			diff = append(diff, map[string]any{"field": d.Field, "desired": d.Desired, "observed": d.Observed})
		}
		p["diff"] = diff
	}
	if len(e.DesiredState) > 0 {
		p["desired_state"] = e.DesiredState
	}
	return p
}

// ResourceOf reads a resource.* event.
func ResourceOf(e capstan.OperationEvent) (Resource, bool) {
	p := e.Payload
	r := Resource{What: what(e.Type), Resource: str(p, "resource"), Lifecycle: str(p, "lifecycle"), Health: str(p, "health"), Outcome: str(p, "outcome"),
		Reason: str(p, "reason"), Previous: str(p, "previous")}
	r.DesiredState, _ = p["desired_state"].(map[string]any)
	list, _ := p["diff"].([]any)
	for _, item := range list {
		m, _ := item.(map[string]any)
		if field, _ := m["field"].(string); field != "" {
			r.Diff = append(r.Diff, capstan.FieldDrift{Field: field, Desired: m["desired"], Observed: m["observed"]})
		}
	}
	return r, Family(e.Type) == "resource"
}

// Binding is binding.resolved: a requirement got its provider from a
// sub-operation.
type Binding struct {
	Node     string // the sub_operation node
	Binding  string // the requirement
	Provider string // the provider's key
	Resource string // the provider's id
	Child    string // the child operation's global id
	Reason   string
}

func (e Binding) Kind() string { return "binding.resolved" }
func (e Binding) Payload() map[string]any {
	return payload{"node": e.Node, "binding": e.Binding}.str("provider", e.Provider).str("resource", e.Resource).str("child", e.Child).str("reason", e.Reason).out()
}

// BindingOf reads a binding.* event.
func BindingOf(e capstan.OperationEvent) (Binding, bool) {
	p := e.Payload
	return Binding{Node: str(p, "node"), Binding: str(p, "binding"), Provider: str(p, "provider"), Resource: str(p, "resource"), Child: str(p, "child"),
		Reason: str(p, "reason")}, Family(e.Type) == "binding"
}

// Intervention is intervention.recorded: a person acted on a node.
type Intervention struct {
	Node, Type string
	Verify     []string
}

func (e Intervention) Kind() string { return "intervention.recorded" }
func (e Intervention) Payload() map[string]any {
	return payload{"node": e.Node, "type": e.Type}.strs("verify", e.Verify).out()
}

// InterventionOf reads an intervention.recorded event.
func InterventionOf(e capstan.OperationEvent) (Intervention, bool) {
	p := e.Payload
	return Intervention{Node: str(p, "node"), Type: str(p, "type"), Verify: strs(p, "verify")}, e.Type == "intervention.recorded"
}

// Analysis is analysis.proposal_refused: an analyzer's proposal was
// refused by the rules a person's would be.
type Analysis struct {
	Node, Diagnosis string
	Problems        []string
	// Failed: the analyzer gave no answer to propose (analysis.failed):
	// the model server refused, was rate limited or unavailable, the
	// budget was spent, or its answer did not hold (problems say which).
	Failed bool
}

func (e Analysis) Kind() string {
	if e.Failed {
		return "analysis.failed"
	}
	return "analysis.proposal_refused"
}
func (e Analysis) Payload() map[string]any {
	return payload{"node": e.Node}.str("diagnosis", e.Diagnosis).strs("problems", e.Problems).out()
}

// AnalysisOf reads an analysis.* event.
func AnalysisOf(e capstan.OperationEvent) (Analysis, bool) {
	p := e.Payload
	return Analysis{Node: str(p, "node"), Diagnosis: str(p, "diagnosis"), Problems: strs(p, "problems"), Failed: e.Type == "analysis.failed"}, Family(e.Type) == "analysis"
}

// SecretRevealed is secret.revealed: a person saw a secret artifact's
// value (never carried here).
type SecretRevealed struct {
	Artifact, Name, ProducedBy, Reason string
	ExpiresAt                          string // RFC 3339
}

func (e SecretRevealed) Kind() string { return "secret.revealed" }
func (e SecretRevealed) Payload() map[string]any {
	return payload{"artifact": e.Artifact}.str("name", e.Name).str("produced_by", e.ProducedBy).str("reason", e.Reason).str("expires_at", e.ExpiresAt).out()
}

// SecretRevealedOf reads a secret.revealed event.
func SecretRevealedOf(e capstan.OperationEvent) (SecretRevealed, bool) {
	p := e.Payload
	return SecretRevealed{Artifact: str(p, "artifact"), Name: str(p, "name"), ProducedBy: str(p, "produced_by"), Reason: str(p, "reason"),
		ExpiresAt: str(p, "expires_at")}, e.Type == "secret.revealed"
}

// SubOperationStarted is suboperation.started: a sub_operation node
// started its child.
type SubOperationStarted struct{ Node, Child string }

func (e SubOperationStarted) Kind() string { return "suboperation.started" }
func (e SubOperationStarted) Payload() map[string]any {
	return payload{"node": e.Node, "child": e.Child}
}

// CompensationRunning is compensation.running: a rollback runs a node's
// compensation.
type CompensationRunning struct{ Node string }

func (e CompensationRunning) Kind() string            { return "compensation.running" }
func (e CompensationRunning) Payload() map[string]any { return payload{"node": e.Node} }

// HostKeyTrusted is host_key.trusted: an ssh target with no pinned host
// key was trusted on first use, its key now pinned on its compute node.
type HostKeyTrusted struct {
	Node        string // the job's node
	Target      string // the job's target requirement
	Host        string // the compute node's key
	Address     string
	Key         string // the key, authorized_keys form
	Fingerprint string // SHA256:…
	Note        string // why the key was not pinned, when it was not
}

func (e HostKeyTrusted) Kind() string { return "host_key.trusted" }
func (e HostKeyTrusted) Payload() map[string]any {
	return payload{"node": e.Node, "target": e.Target, "host": e.Host, "address": e.Address, "key": e.Key}.str("fingerprint", e.Fingerprint).str("note", e.Note).out()
}

// HostKeyTrustedOf reads a host_key.trusted event.
func HostKeyTrustedOf(e capstan.OperationEvent) (HostKeyTrusted, bool) {
	p := e.Payload
	return HostKeyTrusted{Node: str(p, "node"), Target: str(p, "target"), Host: str(p, "host"), Address: str(p, "address"), Key: str(p, "key"),
		Fingerprint: str(p, "fingerprint"), Note: str(p, "note")}, e.Type == "host_key.trusted"
}

// CommandRejected is command.rejected: the operation's owner refused a
// person's command (their mutation answered the same error, or PENDING
// before it was decided).
type CommandRejected struct {
	Command string // the command's id
	What    string // its kind: gate.decide, node.retry, …
	Code    string // the error's code: CONFLICT, INVALID, FORBIDDEN, …
	Reason  string
}

func (e CommandRejected) Kind() string { return "command.rejected" }
func (e CommandRejected) Payload() map[string]any {
	return payload{"command": e.Command, "kind": e.What, "code": e.Code, "reason": e.Reason}.out()
}

// CommandRejectedOf reads a command.rejected event.
func CommandRejectedOf(e capstan.OperationEvent) (CommandRejected, bool) {
	p := e.Payload
	return CommandRejected{Command: str(p, "command"), What: str(p, "kind"), Code: str(p, "code"), Reason: str(p, "reason")}, e.Type == "command.rejected"
}
