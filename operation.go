package capstan

import "time"

// Operation is one run of a plan. It is a separate entity from the Resource
// it changes (invariant 1); the executor issue fills in its behaviour.
type Operation struct {
	Meta
	IntentID     string          `json:"intent_id"`
	PlanID       string          `json:"plan_id"`
	PlanRevision int             `json:"plan_revision"`
	Action       string          `json:"action"`
	Status       OperationStatus `json:"status"`
	Actor        string          `json:"actor"`
	StartedAt    *time.Time      `json:"started_at,omitempty"`
	CompletedAt  *time.Time      `json:"completed_at,omitempty"`
	ParentID     string          `json:"parent_id,omitempty"`
	// ResourceKey names the resource the operation creates or changes (its
	// lifecycle points back here while it runs: invariant 1 keeps the two apart).
	ResourceKey string `json:"resource_key,omitempty"`
	// ResourceBefore is what the operation found its resource in when it
	// began (nil before it began), so an end that changed nothing leaves
	// the resource as it was.
	ResourceBefore *ResourceState `json:"resource_before,omitempty"`
	// OpenPatches are the ids of the operation's proposed PlanPatches:
	// what it waits on for approval.
	OpenPatches []string `json:"open_patches,omitempty"`
	// IdempotencyKey makes startOperation return the same operation twice.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// SeenAt is the timeline position this copy is known to reflect (a
	// live message's last event), never stored: readers of its progress
	// reuse what was computed at that position instead of reading the
	// store once per subscriber. 0 when unknown.
	SeenAt int64 `json:"-"`
}

// Move changes the operation's status or returns the illegal transition error.
func (o *Operation) Move(to OperationStatus) error {
	if err := OperationStatuses.Check(o.Status, to); err != nil {
		return err
	}
	o.Status = to
	return nil
}

// Validate checks the operation.
func (o *Operation) Validate() error {
	var p Problems
	if o.PlanID == "" || o.IntentID == "" {
		p.Addf("an operation runs a plan of an intent")
	}
	if o.Actor == "" {
		p.Addf("actor is empty")
	}
	if !OperationStatuses.Valid(o.Status) {
		p.Addf("unknown status %q", o.Status)
	}
	if len(o.IdempotencyKey) > MaxIdempotencyKey {
		p.Addf("an idempotency key of %d bytes is past the %d allowed", len(o.IdempotencyKey), MaxIdempotencyKey)
	}
	return p.Err("operation")
}

// MaxIdempotencyKey bounds an idempotency key: a client's token for a
// start, stored as an index key.
const MaxIdempotencyKey = 256

// OperationNodeRun is the runtime state of one plan node in one operation.
type OperationNodeRun struct {
	OperationID string        `json:"operation_id"`
	NodeID      string        `json:"node_id"`
	Status      NodeRunStatus `json:"status"`
	Attempts    int           `json:"attempts"`
	StartedAt   *time.Time    `json:"started_at,omitempty"`
	FinishedAt  *time.Time    `json:"finished_at,omitempty"`
	ArtifactIDs []string      `json:"artifact_ids,omitempty"`
	EvidenceIDs []string      `json:"evidence_ids,omitempty"`
	Error       string        `json:"error,omitempty"`
	// Revision is the plan revision the node's current run started on.
	Revision int `json:"revision,omitempty"`
	// ChildOperationID is the operation a sub_operation node started.
	ChildOperationID string `json:"child_operation_id,omitempty"`
}

// Move changes the node run's status or returns the illegal transition error.
func (n *OperationNodeRun) Move(to NodeRunStatus) error {
	if err := NodeRunStatuses.Check(n.Status, to); err != nil {
		return err
	}
	n.Status = to
	return nil
}

// Artifact sensitivities.
const (
	SensitivityPublic   = "public"
	SensitivityInternal = "internal"
	SensitivitySecret   = "secret"
)

// Artifact is an output other nodes may consume. A secret artifact holds
// only a reference to where its value lives (invariant 10).
type Artifact struct {
	Meta
	OperationID string `json:"operation_id"`
	Type        string `json:"type"`
	Name        string `json:"name"`
	Sensitivity string `json:"sensitivity"`
	StorageRef  string `json:"storage_ref"`
	ProducedBy  string `json:"produced_by"`
	// Size and SHA256 (hex) are the kept bytes' (none for a secret
	// artifact, or one kept before they were recorded): a read checks them.
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// Validate checks the artifact.
func (a *Artifact) Validate() error {
	var p Problems
	switch a.Sensitivity {
	case SensitivityPublic, SensitivityInternal, SensitivitySecret:
	default:
		p.Addf("unknown sensitivity %q", a.Sensitivity)
	}
	if a.StorageRef == "" || a.ProducedBy == "" {
		p.Addf("an artifact needs a storage ref and a producer")
	}
	return p.Err("artifact " + a.Name)
}

// Evidence results.
const (
	EvidencePassed       = "passed"
	EvidenceFailed       = "failed"
	EvidenceInconclusive = "inconclusive"
)

// Evidence is a verdict about a contract item with its source (SPEC §5.4).
type Evidence struct {
	Meta
	OperationID string         `json:"operation_id"`
	ProducedBy  string         `json:"produced_by"`
	Capability  string         `json:"capability,omitempty"`
	Item        string         `json:"item"`
	Result      string         `json:"result"`
	Source      map[string]any `json:"source"`
	ObservedAt  time.Time      `json:"observed_at"`
}

// Simulated reports whether the evidence came from the simulator: it
// checked nothing real.
func (e *Evidence) Simulated() bool { return e.Source["type"] == "sim" }

// Validate checks the evidence.
func (e *Evidence) Validate() error {
	var p Problems
	switch e.Result {
	case EvidencePassed, EvidenceFailed, EvidenceInconclusive:
	default:
		p.Addf("unknown result %q", e.Result)
	}
	if e.ProducedBy == "" || len(e.Source) == 0 {
		p.Addf("evidence needs a producer and a source")
	}
	return p.Err("evidence " + e.Item)
}

// Gate is a point of an operation that waits for decisions.
type Gate struct {
	Meta
	OperationID string         `json:"operation_id"`
	NodeID      string         `json:"node_id"`
	Spec        GateSpec       `json:"spec"`
	Decisions   []GateDecision `json:"decisions,omitempty"`
	Status      GateStatus     `json:"status"`
}

// GateStatus is where a gate stands.
type GateStatus string

const (
	GateWaiting          GateStatus = "waiting"
	GateApproved         GateStatus = "approved"
	GateRejected         GateStatus = "rejected"
	GateTimedOutApproved GateStatus = "timed_out_approved"
	GateTimedOutRejected GateStatus = "timed_out_rejected"
)

// GateDecision is one recorded decision on a gate.
type GateDecision struct {
	Actor   string    `json:"actor"`
	Role    string    `json:"role"`
	At      time.Time `json:"at"`
	Approve bool      `json:"approve"`
	Comment string    `json:"comment,omitempty"`
	// Digest is the gate's upstream digest the approver saw
	// (UpstreamDigest); a decision on another digest no longer counts.
	Digest string `json:"digest,omitempty"`
	// Dismissed is set when a patch changed what the decision approved.
	Dismissed bool `json:"dismissed,omitempty"`
}

// Intervention is a manual or AI action on a node. It never skips
// verification (invariant 8).
type Intervention struct {
	Meta
	OperationID          string    `json:"operation_id"`
	Type                 string    `json:"type"`
	Actor                string    `json:"actor"`
	TargetNode           string    `json:"target_node"`
	Note                 string    `json:"note"`
	RequiresVerification []string  `json:"requires_verification,omitempty"`
	At                   time.Time `json:"at"`
}

// OperationEvent is one entry of an operation's append-only timeline.
type OperationEvent struct {
	OperationID string         `json:"operation_id"`
	Sequence    int64          `json:"sequence"`
	Type        string         `json:"type"`
	Actor       string         `json:"actor"`
	At          time.Time      `json:"at"`
	Payload     map[string]any `json:"payload,omitempty"`
}
