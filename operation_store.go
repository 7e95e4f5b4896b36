package capstan

import (
	"context"
	"time"
)

// OperationStore persists operations and everything they produce. Every
// change of a running operation is one OperationChange, committed in one
// transaction together with the timeline events that describe it, so the
// timeline is gap-free and never ahead of or behind the state (invariant 11).
type OperationStore interface {
	// StartOperation stores a new operation, moves its plan to running
	// (frozen: invariant 4), writes its intent (executing; nil writes
	// none) and appends the first events, in one transaction. The plan's
	// and the intent's versions must be current and the operation's
	// idempotency key unused in the organization (ECONFLICT otherwise).
	// A start under fence (a child an executor starts for its
	// sub_operation node; nil: none) is refused like a step under it
	// (IsFenced) once the fence is not its lease's grant any more.
	StartOperation(ctx context.Context, org string, op *Operation, plan *Plan, in *Intent, events []OperationEvent, fence *Fence) error
	GetOperation(ctx context.Context, org, id string) (*Operation, error)
	// RecordCommand stores a pending command for the operation's owner
	// to apply (Command): no version or sequence of the operation moves,
	// so no step conflicts with it; the operation's touched time does,
	// for the owner's tailer (ENOTFOUND: no operation; ECONFLICT: the
	// id is taken, or the operation has ended: Ended).
	RecordCommand(ctx context.Context, org, opID string, c *Command) error
	// GetCommand returns a command of an operation (ENOTFOUND).
	GetCommand(ctx context.Context, org, opID, id string) (*Command, error)
	// GetPlanPatch returns a PlanPatch by id (ENOTFOUND).
	GetPlanPatch(ctx context.Context, org, id string) (*PlanPatch, error)
	// ListPlanPatches returns an operation's patches, oldest first.
	ListPlanPatches(ctx context.Context, org, operationID string) ([]*PlanPatch, error)
	// GetOperationByKey returns the operation started with an idempotency key (ENOTFOUND).
	GetOperationByKey(ctx context.Context, org, idempotencyKey string) (*Operation, error)
	ListOperations(ctx context.Context, org string, f OperationFilter) ([]*Operation, int, error)
	// ApplyOperationChange commits one step: the operation (its version
	// must be current), node runs and gates (upserted by node), evidence,
	// artifacts and interventions (appended), the intent, plan and
	// resources it carries (each at its current version; a resource
	// without an id is created, ECONFLICT when its key is taken; a
	// relationship to a missing resource is EINVALID) and the events,
	// which get the next sequence numbers of the operation. All or nothing.
	ApplyOperationChange(ctx context.Context, org string, ch *OperationChange) error
	// OperationRecords returns what an operation produced so far: every
	// kind of record, or only the kinds named (RecordCommand, …; one not
	// in RecordKinds is EINVALID), which costs only their reading.
	OperationRecords(ctx context.Context, org, operationID string, kinds ...string) (*OperationRecords, error)
	// ListEvents returns up to limit events with a sequence above after, in order.
	ListEvents(ctx context.Context, org, operationID string, after int64, limit int) ([]OperationEvent, error)
	// UnfinishedOperations lists, across organizations, every operation
	// not in a terminal status: what the executor resumes on start. It
	// names them without reading them, so an operation that cannot be read
	// fails in its own resumption, not the listing of all the others.
	UnfinishedOperations(ctx context.Context) ([]OperationRef, error)
}

// LeaseHolder is who holds a lease, and until when.
type LeaseHolder struct {
	// Key names the lease (one per shard of operations).
	Key   string
	ID    string
	Until time.Time
	// Token is the lease's fencing token: one more with every grant to
	// another holder (Fence).
	Token int64
}

// OperationRef names an operation across organizations.
type OperationRef struct {
	OrganizationID string
	ID             string
}

// OperationChange is one atomic step of an operation.
type OperationChange struct {
	Operation     *Operation
	NodeRuns      []OperationNodeRun
	Gates         []Gate
	Evidence      []Evidence
	Artifacts     []Artifact
	Interventions []Intervention
	// Commands are the commands the step decided (applied or rejected),
	// upserted by id.
	Commands []Command
	Events   []OperationEvent
	// Intent and Plan, when set, are written with the step: they follow
	// their operation (executing, then completed, failed or cancelled) and
	// the plan's bindings follow its sub-operations.
	Intent *Intent
	Plan   *Plan
	// Patches are PlanPatches the step proposes (version 0: created, with
	// the id given or a new one) or moves (each at its current version).
	Patches []PlanPatch
	// Resources are the resources the step changes (the operation's own,
	// a consumer that now uses what a sub-operation created), computed by
	// the lifecycle functions (lifecycle.go); one without an ID is created.
	Resources []*Resource
	// Fence, when set, is the lease grant the step is written under (an
	// executor's step): a store that keeps leases refuses the step, in
	// its own transaction, once the grant is not the lease's any more or
	// has run out. A person's change, through the API, carries none.
	Fence *Fence
}

// Writes reports whether the change writes more than the operation and
// its records: an intent, a plan or resources.
func (ch *OperationChange) Writes() bool {
	return ch.Intent != nil || ch.Plan != nil || len(ch.Resources) > 0 || len(ch.Patches) > 0
}

// OperationRecords is what an operation produced: node runs and gates by
// node id order, the rest in the order they were recorded.
type OperationRecords struct {
	NodeRuns      []OperationNodeRun
	Gates         []Gate
	Evidence      []Evidence
	Artifacts     []Artifact
	Interventions []Intervention
	// Commands are the commands recorded for it, oldest first.
	Commands []Command
}

// PendingCommands are the commands the owner has yet to decide, oldest
// first.
func (r *OperationRecords) PendingCommands() []Command {
	var out []Command
	for _, c := range r.Commands {
		if c.Status == CommandPending {
			out = append(out, c)
		}
	}
	return out
}

// OperationFilter selects operations; After is the id to start after.
type OperationFilter struct {
	Status      OperationStatus
	IntentID    string
	PlanID      string
	ResourceKey string
	// AwaitingPatch selects operations with a PlanPatch awaiting approval.
	AwaitingPatch bool
	// CreatedAfter and CreatedBefore bound when the operation started
	// (zero: unbounded).
	CreatedAfter, CreatedBefore time.Time
	After                       string
	Limit                       int
}

// Matches reports whether op passes every condition of the filter.
func (f OperationFilter) Matches(op *Operation) bool {
	return (f.Status == "" || op.Status == f.Status) && (f.IntentID == "" || op.IntentID == f.IntentID) &&
		(f.PlanID == "" || op.PlanID == f.PlanID) && (f.ResourceKey == "" || op.ResourceKey == f.ResourceKey) &&
		(!f.AwaitingPatch || len(op.OpenPatches) > 0) &&
		(f.CreatedAfter.IsZero() || op.CreatedAt.After(f.CreatedAfter)) && (f.CreatedBefore.IsZero() || op.CreatedAt.Before(f.CreatedBefore))
}

// Terminal reports whether an operation in status s is finished.
func (s OperationStatus) Terminal() bool {
	switch s {
	case OperationSucceeded, OperationFailed, OperationCancelled, OperationRolledBack:
		return true
	}
	return false
}

// Validate checks a change before a store commits it.
func (ch *OperationChange) Validate() error {
	var p Problems
	if ch.Operation == nil || ch.Operation.ID == "" {
		p.Addf("a change belongs to a stored operation")
		return p.Err("operation change")
	}
	if err := ch.Operation.Validate(); err != nil {
		p = append(p, ErrorDetails(err)...)
	}
	for _, n := range ch.NodeRuns {
		if n.NodeID == "" || !NodeRunStatuses.Valid(n.Status) {
			p.Addf("node run %q has no node or an unknown status %q", n.NodeID, n.Status)
		}
	}
	for _, g := range ch.Gates {
		if g.NodeID == "" {
			p.Addf("a gate belongs to a node")
		}
	}
	for i := range ch.Patches {
		if err := ch.Patches[i].Validate(ch.Operation.ID); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
	}
	for i := range ch.Evidence {
		if err := ch.Evidence[i].Validate(); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
	}
	for i := range ch.Artifacts {
		if err := ch.Artifacts[i].Validate(); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
	}
	for _, e := range ch.Events {
		if e.Type == "" || e.Actor == "" {
			p.Addf("an event needs a type and an actor (invariant 11)")
		}
	}
	if ch.Intent != nil {
		if ch.Intent.ID != ch.Operation.IntentID {
			p.Addf("intent %s is not the operation's", ch.Intent.ID)
		} else if err := ch.Intent.Validate(); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
	}
	if ch.Plan != nil {
		if ch.Plan.ID != ch.Operation.PlanID {
			p.Addf("plan %s is not the operation's", ch.Plan.ID)
		} else if err := ch.Plan.Validate(); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
	}
	keys := map[string]bool{}
	for _, r := range ch.Resources {
		if err := r.Validate(); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
		if keys[r.Key()] {
			p.Addf("resource %s is written twice", r.Key())
		}
		keys[r.Key()] = true
	}
	return p.Err("operation change")
}

// CheckStart is StartOperation's check of its arguments, the same on
// every store: a valid operation of that plan and (when given) intent.
func CheckStart(op *Operation, plan *Plan, in *Intent) error {
	if err := op.Validate(); err != nil {
		return err
	}
	if err := plan.Validate(); err != nil {
		return err
	}
	if plan.ID != op.PlanID {
		return Errorf(EINVALID, "operation runs plan %s, not %s", op.PlanID, plan.ID)
	}
	if in != nil {
		if in.ID != op.IntentID {
			return Errorf(EINVALID, "operation runs intent %s, not %s", op.IntentID, in.ID)
		}
		return in.Validate()
	}
	return nil
}

// ChangeMetas are the Metas a store gave the intent, plan and resources a
// change wrote. Stores collect them inside the transaction and set them on
// the change only once it committed (Apply), so a failed or retried
// transaction leaves the caller's values as they were.
type ChangeMetas struct {
	Intent, Plan Meta
	Resources    []Meta
	Patches      []Meta
}

// Apply sets the committed Metas on the change's intent, plan and resources.
func (w ChangeMetas) Apply(ch *OperationChange) {
	if ch.Intent != nil {
		ch.Intent.Meta = w.Intent
	}
	if ch.Plan != nil {
		ch.Plan.Meta = w.Plan
	}
	for i, r := range ch.Resources {
		r.Meta = w.Resources[i]
	}
	for i := range w.Patches {
		ch.Patches[i].Meta = w.Patches[i]
	}
}

// MaxOperationCommit bounds a commit that touches an operation, from the
// start of its transaction: a store whose commits other processes tail
// (cypher) has the database end a transaction that would take longer, so
// a commit becomes visible within this of the time it is stamped with,
// and a tailer that looks back further never misses one (live.Tailer).
const MaxOperationCommit = 30 * time.Second

// OperationTouch is an operation as its latest commit left it, without
// its content: what a process that did not make the commit needs to tell
// whether it has news (live.Tailer).
type OperationTouch struct {
	OrganizationID, ID, ParentID string
	LastSequence                 int64
	// PrevSequence is the last sequence before the latest commit: where
	// that commit's events start (0 for an operation's first).
	PrevSequence int64
	Active       bool
	CreatedAt    time.Time
	// Commanded is when a command was last recorded for it (the
	// database's milliseconds; 0: never): its owner has one to apply.
	Commanded int64
}

// TimelineCursor asks for an operation's events after a sequence.
type TimelineCursor struct {
	OrganizationID, ID string
	After              int64
}

// TimelineNews is an operation as stored and its events after a cursor,
// in order, up to a limit. LastSequence is the operation's last event as
// of the snapshot, which may be read after the events: events that stop
// short of it are not all there is (the limit, or a commit between the
// two reads), and the snapshot is ahead of them.
type TimelineNews struct {
	Operation    *Operation
	Events       []OperationEvent
	LastSequence int64
}

// StampedRecords returns copies of the change's records as a store keeps
// them — ids, meta (a new gate created, a known one updated; evidence,
// artifacts and interventions created) and the operation set — leaving
// the change as it is until the store's commit succeeds (a retried
// transaction starts over from it).
func (ch *OperationChange) StampedRecords(org string, now time.Time) *OperationChange {
	opID := ch.Operation.ID
	out := &OperationChange{
		NodeRuns: append([]OperationNodeRun(nil), ch.NodeRuns...), Gates: append([]Gate(nil), ch.Gates...),
		Evidence: append([]Evidence(nil), ch.Evidence...), Artifacts: append([]Artifact(nil), ch.Artifacts...),
		Interventions: append([]Intervention(nil), ch.Interventions...), Commands: append([]Command(nil), ch.Commands...),
	}
	for i := range out.Commands {
		out.Commands[i].OperationID = opID
	}
	for i := range out.NodeRuns {
		out.NodeRuns[i].OperationID = opID
	}
	for i := range out.Gates {
		out.Gates[i].Meta.Touch(org, out.Gates[i].ID == "", now)
		out.Gates[i].OperationID = opID
	}
	for i := range out.Evidence {
		out.Evidence[i].Meta.Touch(org, true, now)
		out.Evidence[i].OperationID = opID
	}
	for i := range out.Artifacts {
		out.Artifacts[i].Meta.Touch(org, true, now)
		out.Artifacts[i].OperationID = opID
	}
	for i := range out.Interventions {
		out.Interventions[i].Meta.Touch(org, true, now)
		out.Interventions[i].OperationID = opID
	}
	return out
}
