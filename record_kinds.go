package capstan

import (
	"encoding/json"
	"slices"
	"strings"
)

// Record kinds name an operation's records where a store keeps them (a
// bbolt key, an :OpRecord's kind): stored, so never renamed; their
// numbers order them as OperationRecords lists them. Both stores encode
// and decode records through RecordRows and OperationRecords.Add.
const (
	RecordNodeRun      = "1-node-run"
	RecordGate         = "2-gate"
	RecordEvidence     = "3-evidence"
	RecordArtifact     = "4-artifact"
	RecordIntervention = "5-intervention"
	RecordCommand      = "6-command"
)

// RecordKinds are the record kinds in their order, each with the kind a
// backup gives its records.
var RecordKinds = []struct{ Stored, Backup string }{
	{RecordNodeRun, BackupNodeRun}, {RecordGate, BackupGate}, {RecordEvidence, BackupEvidence},
	{RecordArtifact, BackupArtifact}, {RecordIntervention, BackupIntervention}, {RecordCommand, BackupCommand},
}

// SelectRecordKinds checks the kinds a read of an operation's records
// asks for and returns them, or every stored kind when none is named.
func SelectRecordKinds(kinds []string) ([]string, error) {
	var all []string
	for _, k := range RecordKinds {
		all = append(all, k.Stored)
	}
	if len(kinds) == 0 {
		return all, nil
	}
	var p Problems
	for _, k := range kinds {
		if !slices.Contains(all, k) {
			p.Addf("%q is not a kind of operation record (%s)", k, strings.Join(all, ", "))
		}
	}
	return kinds, p.Err("operation records")
}

// RecordRow is one record of a change, encoded for a store: its kind, its
// key among the operation's records of that kind, and its JSON.
type RecordRow struct {
	Kind, Key string
	JSON      []byte
}

// RecordRows encodes the records ch carries, kind by kind in order.
func (ch *OperationChange) RecordRows() ([]RecordRow, error) {
	var rows []RecordRow
	var err error
	add := func(kind, key string, v any) {
		if err != nil {
			return
		}
		var data []byte
		data, err = json.Marshal(v)
		rows = append(rows, RecordRow{Kind: kind, Key: key, JSON: data})
	}
	for _, r := range ch.NodeRuns {
		add(RecordNodeRun, r.NodeID, r)
	}
	for _, g := range ch.Gates {
		add(RecordGate, g.NodeID, g)
	}
	for _, e := range ch.Evidence {
		add(RecordEvidence, e.ID, e)
	}
	for _, a := range ch.Artifacts {
		add(RecordArtifact, a.ID, a)
	}
	for _, iv := range ch.Interventions {
		add(RecordIntervention, iv.ID, iv)
	}
	for _, c := range ch.Commands {
		add(RecordCommand, c.ID, c)
	}
	return rows, err
}

// Add decodes a stored record of kind into its list; a kind this
// version does not know is left out.
func (r *OperationRecords) Add(kind string, data []byte) error {
	switch kind {
	case RecordNodeRun:
		return addRecord(data, &r.NodeRuns)
	case RecordGate:
		return addRecord(data, &r.Gates)
	case RecordEvidence:
		return addRecord(data, &r.Evidence)
	case RecordArtifact:
		return addRecord(data, &r.Artifacts)
	case RecordIntervention:
		return addRecord(data, &r.Interventions)
	case RecordCommand:
		return addRecord(data, &r.Commands)
	}
	return nil
}

func addRecord[T any](data []byte, list *[]T) error {
	var t T
	if err := json.Unmarshal(data, &t); err != nil {
		return err
	}
	*list = append(*list, t)
	return nil
}

// BackupKindOf is the backup kind of a stored record kind.
func BackupKindOf(stored string) (string, bool) {
	for _, k := range RecordKinds {
		if k.Stored == stored {
			return k.Backup, true
		}
	}
	return "", false
}

// StoredKindOf is the stored record kind of a backup kind.
func StoredKindOf(backup string) (string, bool) {
	for _, k := range RecordKinds {
		if k.Backup == backup {
			return k.Stored, true
		}
	}
	return "", false
}
