package capstan

import "slices"

// StateMachine lists, for each status, the statuses it may move to. A status
// missing from the map is terminal.
type StateMachine[S ~string] struct {
	Name  string
	Moves map[S][]S
}

// Valid reports whether s is a status of this machine.
func (m StateMachine[S]) Valid(s S) bool {
	if _, ok := m.Moves[s]; ok {
		return true
	}
	for _, tos := range m.Moves {
		if slices.Contains(tos, s) {
			return true
		}
	}
	return false
}

// Check returns nil when from -> to is a legal move, otherwise an EINVALID
// error naming both statuses. Staying in the same status is not a move.
func (m StateMachine[S]) Check(from, to S) error {
	if !m.Valid(to) {
		return Errorf(EINVALID, "unknown %s status %q", m.Name, to)
	}
	if slices.Contains(m.Moves[from], to) {
		return nil
	}
	return Errorf(EINVALID, "illegal %s status transition %s -> %s", m.Name, from, to)
}

// IntentStatus is the status of an Intent.
type IntentStatus string

const (
	IntentDraft     IntentStatus = "draft"
	IntentSubmitted IntentStatus = "submitted"
	IntentPlanned   IntentStatus = "planned"
	IntentExecuting IntentStatus = "executing"
	IntentCompleted IntentStatus = "completed"
	IntentFailed    IntentStatus = "failed"
	IntentCancelled IntentStatus = "cancelled"
)

// IntentStatuses is the intent state machine. A planned intent may be planned
// again (submitted) when its plan was invalid or the user asks for a new plan.
var IntentStatuses = StateMachine[IntentStatus]{Name: "intent", Moves: map[IntentStatus][]IntentStatus{
	IntentDraft:     {IntentSubmitted, IntentCancelled},
	IntentSubmitted: {IntentPlanned, IntentCancelled},
	IntentPlanned:   {IntentSubmitted, IntentExecuting, IntentCancelled},
	IntentExecuting: {IntentCompleted, IntentFailed, IntentCancelled},
}}

// PlanStatus is the status of a Plan.
type PlanStatus string

const (
	PlanDraft      PlanStatus = "draft"
	PlanResolving  PlanStatus = "resolving"
	PlanReady      PlanStatus = "ready"
	PlanInvalid    PlanStatus = "invalid"
	PlanApproved   PlanStatus = "approved"
	PlanRunning    PlanStatus = "running"
	PlanCompleted  PlanStatus = "completed"
	PlanFailed     PlanStatus = "failed"
	PlanCancelled  PlanStatus = "cancelled"
	PlanSuperseded PlanStatus = "superseded"
)

// PlanStatuses is the plan state machine. Editing a ready or invalid plan
// re-validates it, so ready and invalid move into each other.
var PlanStatuses = StateMachine[PlanStatus]{Name: "plan", Moves: map[PlanStatus][]PlanStatus{
	PlanDraft:     {PlanResolving, PlanCancelled},
	PlanResolving: {PlanReady, PlanInvalid},
	PlanReady:     {PlanInvalid, PlanApproved, PlanRunning, PlanCancelled, PlanSuperseded},
	PlanInvalid:   {PlanReady, PlanCancelled, PlanSuperseded},
	PlanApproved:  {PlanRunning, PlanCancelled},
	PlanRunning:   {PlanCompleted, PlanFailed, PlanCancelled, PlanSuperseded},
}}

// Editable reports whether a plan in status s may still be edited directly
// (before an operation starts). After start only a PlanPatch changes it.
func (s PlanStatus) Editable() bool {
	return s == PlanDraft || s == PlanReady || s == PlanInvalid
}

// OperationStatus is the status of an Operation.
type OperationStatus string

const (
	OperationPending     OperationStatus = "pending"
	OperationRunning     OperationStatus = "running"
	OperationWaiting     OperationStatus = "waiting"
	OperationSucceeded   OperationStatus = "succeeded"
	OperationFailed      OperationStatus = "failed"
	OperationCancelling  OperationStatus = "cancelling"
	OperationCancelled   OperationStatus = "cancelled"
	OperationRollingBack OperationStatus = "rolling_back"
	OperationRolledBack  OperationStatus = "rolled_back"
)

// OperationStatuses is the operation state machine.
var OperationStatuses = StateMachine[OperationStatus]{Name: "operation", Moves: map[OperationStatus][]OperationStatus{
	OperationPending:     {OperationRunning, OperationCancelled},
	OperationRunning:     {OperationWaiting, OperationSucceeded, OperationFailed, OperationCancelling, OperationRollingBack},
	OperationWaiting:     {OperationRunning, OperationFailed, OperationCancelling, OperationRollingBack},
	OperationCancelling:  {OperationCancelled, OperationRollingBack},
	OperationRollingBack: {OperationRolledBack, OperationFailed},
}}

// NodeRunStatus is the status of one plan node in one operation.
type NodeRunStatus string

const (
	NodePending             NodeRunStatus = "pending"
	NodeReady               NodeRunStatus = "ready"
	NodeRunning             NodeRunStatus = "running"
	NodeVerifying           NodeRunStatus = "verifying"
	NodeSucceeded           NodeRunStatus = "succeeded"
	NodeFailed              NodeRunStatus = "failed"
	NodeRetrying            NodeRunStatus = "retrying"
	NodeWaitingApproval     NodeRunStatus = "waiting_approval"
	NodeWaitingIntervention NodeRunStatus = "waiting_intervention"
	NodeSkipped             NodeRunStatus = "skipped"
	NodeCancelled           NodeRunStatus = "cancelled"
	NodeRolledBack          NodeRunStatus = "rolled_back"
)

// NodeRunStatuses is the node run state machine. An applied PlanPatch
// moves a failed or waiting node back to pending (retried, replaced, or
// waiting for a node the patch added) or to skipped.
var NodeRunStatuses = StateMachine[NodeRunStatus]{Name: "node run", Moves: map[NodeRunStatus][]NodeRunStatus{
	NodePending:             {NodeReady, NodeSkipped, NodeCancelled},
	NodeReady:               {NodeRunning, NodeWaitingApproval, NodeWaitingIntervention, NodeSkipped, NodeCancelled},
	NodeRunning:             {NodeVerifying, NodeFailed, NodeCancelled},
	NodeVerifying:           {NodeSucceeded, NodeFailed, NodeCancelled},
	NodeFailed:              {NodeRetrying, NodeWaitingIntervention, NodeRolledBack, NodePending, NodeSkipped},
	NodeRetrying:            {NodeRunning, NodeCancelled},
	NodeWaitingApproval:     {NodeSucceeded, NodeFailed, NodeCancelled, NodePending},
	NodeWaitingIntervention: {NodeVerifying, NodeSkipped, NodeCancelled, NodePending},
	NodeSucceeded:           {NodeRolledBack},
}}

// LifecycleStatus is the lifecycle of a Resource. It never replaces an
// operation's status: a resource points at its active or last operation.
type LifecycleStatus string

const (
	LifecyclePlanned      LifecycleStatus = "planned"
	LifecycleProvisioning LifecycleStatus = "provisioning"
	LifecycleActive       LifecycleStatus = "active"
	LifecycleUpdating     LifecycleStatus = "updating"
	LifecycleDegraded     LifecycleStatus = "degraded"
	LifecycleRepairing    LifecycleStatus = "repairing"
	LifecycleDeleting     LifecycleStatus = "deleting"
	LifecycleDeleted      LifecycleStatus = "deleted"
	LifecycleFailed       LifecycleStatus = "failed"
)

// LifecycleStatuses is the resource lifecycle state machine. A change
// that ends having changed nothing goes back to where it started (a
// provisioning to planned, a deletion to what was to be deleted); a
// deleted resource may be created again.
var LifecycleStatuses = StateMachine[LifecycleStatus]{Name: "resource lifecycle", Moves: map[LifecycleStatus][]LifecycleStatus{
	LifecyclePlanned:      {LifecycleProvisioning, LifecycleDeleting, LifecycleDeleted},
	LifecycleProvisioning: {LifecycleActive, LifecycleFailed, LifecycleDeleting, LifecyclePlanned, LifecycleDeleted},
	LifecycleActive:       {LifecycleUpdating, LifecycleDegraded, LifecycleRepairing, LifecycleDeleting},
	LifecycleUpdating:     {LifecycleActive, LifecycleDegraded, LifecycleFailed, LifecycleRepairing, LifecycleDeleting},
	LifecycleDegraded:     {LifecycleRepairing, LifecycleActive, LifecycleUpdating, LifecycleDeleting, LifecycleFailed},
	LifecycleRepairing:    {LifecycleActive, LifecycleDegraded, LifecycleFailed, LifecycleUpdating, LifecycleDeleting},
	LifecycleDeleting: {LifecycleDeleted, LifecycleFailed, LifecyclePlanned, LifecycleProvisioning, LifecycleActive,
		LifecycleUpdating, LifecycleDegraded, LifecycleRepairing},
	LifecycleFailed:  {LifecycleRepairing, LifecycleProvisioning, LifecycleDeleting},
	LifecycleDeleted: {LifecycleProvisioning},
}}

// HealthStatus is the observed health of a Resource. Any health may follow any
// other: health is an observation, not a workflow.
type HealthStatus string

const (
	HealthUnknown   HealthStatus = "unknown"
	HealthHealthy   HealthStatus = "healthy"
	HealthDegraded  HealthStatus = "degraded"
	HealthUnhealthy HealthStatus = "unhealthy"
	HealthDrifted   HealthStatus = "drifted"
	// HealthUnreachable: its host could not be reached, so nothing is
	// known of it (not the same as unhealthy).
	HealthUnreachable HealthStatus = "unreachable"
)

// ValidHealth reports whether h is a known health status.
func ValidHealth(h HealthStatus) bool {
	switch h {
	case HealthUnknown, HealthHealthy, HealthDegraded, HealthUnhealthy, HealthDrifted, HealthUnreachable:
		return true
	}
	return false
}

// BindingStatus is the status of a ResourceBinding.
type BindingStatus string

const (
	BindingResolved            BindingStatus = "resolved"
	BindingPendingSubOperation BindingStatus = "pending_sub_operation"
	BindingUnresolved          BindingStatus = "unresolved"
	BindingFailed              BindingStatus = "failed"
)
