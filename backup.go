package capstan

import (
	"context"
	"encoding/json"
	"slices"
)

// A backup is one organization's records, each as the store keeps it (its
// JSON, with ids, versions and times), in dependency order: what a record
// refers to comes before it. Either store writes them (Dumper) and either
// loads them (Restorer), so a backup of the embedded store restores onto
// Neo4j and back. What a store derives from its records (indexes, graph
// edges, profiles, counters) is not in a backup: the restoring store
// builds it. Leases and executor members are not either: they belong to
// the processes of the store that was backed up.

// Backup record kinds, in the order a dump writes them.
const (
	BackupPack         = "pack"
	BackupResource     = "resource"
	BackupIntent       = "intent"
	BackupPlan         = "plan"
	BackupPlanRevision = "plan_revision"
	BackupOperation    = "operation"
	BackupNodeRun      = "node_run"
	BackupGate         = "gate"
	BackupEvidence     = "evidence"
	BackupArtifact     = "artifact"
	BackupIntervention = "intervention"
	BackupCommand      = "command"
	BackupEvent        = "event"
	BackupPlanPatch    = "plan_patch"
	BackupSecret       = "secret"
)

// BackupKinds are the record kinds in dump order.
var BackupKinds = []string{BackupPack, BackupResource, BackupIntent, BackupPlan, BackupPlanRevision,
	BackupOperation, BackupNodeRun, BackupGate, BackupEvidence, BackupArtifact, BackupIntervention,
	BackupCommand, BackupEvent, BackupPlanPatch, BackupSecret}

// ValidKind reports whether kind is a backup record kind.
func ValidKind(kind string) bool { return slices.Contains(BackupKinds, kind) }

// BackupRecord is one stored entity of an organization.
type BackupRecord struct {
	Kind string `json:"kind"`
	// Operation is the operation an operation's record or event belongs
	// to; Key is what identifies it within the operation (a node id, an
	// evidence id, an event's sequence) or a secret's name.
	Operation string          `json:"operation,omitempty"`
	Key       string          `json:"key,omitempty"`
	Data      json.RawMessage `json:"data"`
}

// Dumper writes one organization's records in one consistent snapshot:
// a read transaction that does not stop writers.
type Dumper interface {
	Dump(ctx context.Context, org string, emit func(BackupRecord) error) error
}

// Restorer loads records into a store that holds nothing of the
// organization (ECONFLICT otherwise).
type Restorer interface {
	BeginRestore(ctx context.Context, org string) (Restoration, error)
}

// Restoration is one organization's restore in progress: batches of
// records in dump order, then Finish, which builds what needed every
// record first (relationships between resources, timeline counters).
// A restore that fails is aborted: Abort removes what it wrote, so a
// failed restore leaves the store as it found it.
type Restoration interface {
	Write(ctx context.Context, batch []BackupRecord) error
	Finish(ctx context.Context) error
	Abort(ctx context.Context) error
}
