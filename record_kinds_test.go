package capstan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecordsRoundTripThroughTheirKinds: every record a change carries
// is encoded with its kind and key and decoded into its own list; a kind
// this version does not know is left out, and every kind maps to its
// backup kind and back.
func TestRecordsRoundTripThroughTheirKinds(t *testing.T) {
	ch := &OperationChange{
		NodeRuns:      []OperationNodeRun{{NodeID: "a", Status: NodeRunning}},
		Gates:         []Gate{{NodeID: "g"}},
		Evidence:      []Evidence{{Meta: Meta{ID: "e1"}, Item: "ok"}},
		Artifacts:     []Artifact{{Meta: Meta{ID: "a1"}, Name: "log"}},
		Interventions: []Intervention{{Meta: Meta{ID: "i1"}}},
		Commands:      []Command{{ID: "c1"}},
	}
	rows, err := ch.RecordRows()
	require.NoError(t, err)
	var kinds, keys []string
	back := &OperationRecords{}
	for _, r := range rows {
		kinds, keys = append(kinds, r.Kind), append(keys, r.Key)
		require.NoError(t, back.Add(r.Kind, r.JSON))
	}
	require.Equal(t, []string{RecordNodeRun, RecordGate, RecordEvidence, RecordArtifact, RecordIntervention, RecordCommand}, kinds)
	require.Equal(t, []string{"a", "g", "e1", "a1", "i1", "c1"}, keys)
	require.Equal(t, ch.NodeRuns, back.NodeRuns)
	require.Equal(t, ch.Commands, back.Commands)
	require.Len(t, back.Evidence, 1)
	require.NoError(t, back.Add("9-from-a-newer-capstan", []byte(`{}`)))
	require.Error(t, back.Add(RecordGate, []byte(`not json`)))
	for _, k := range RecordKinds {
		b, ok := BackupKindOf(k.Stored)
		require.True(t, ok)
		s, ok := StoredKindOf(b)
		require.True(t, ok)
		require.Equal(t, k.Stored, s)
	}
	_, ok := StoredKindOf("no-such-kind")
	require.False(t, ok)
}
