package event_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// TestEveryFamilyReadsBackWhatWasWritten: each family's event, recorded
// and stored (a JSON round trip, as both stores do), reads back equal
// through its reader, whatever numbers and lists came back as.
func TestEveryFamilyReadsBackWhatWasWritten(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		written event.Event
		read    func(capstan.OperationEvent) (event.Event, bool)
	}{
		{event.Operation{What: "created", Plan: "UGxhbjpw", Revision: 2, Parent: "T3A6cA"}, wrap(event.OperationOf)},
		{event.Operation{What: "failed", Node: "n", Reason: "boom"}, wrap(event.OperationOf)},
		{event.Node{What: "running", Node: "n", Attempt: 3, Revision: 2}, wrap(event.NodeOf)},
		{event.Node{What: "retrying", Node: "n", Wait: "1s", Reason: "timeout", Child: "T3A6Yw"}, wrap(event.NodeOf)},
		{event.Gate{What: "waiting", Node: "g", Roles: []string{"sre", "platform_admin"}}, wrap(event.GateOf)},
		{event.Gate{What: "decided", Node: "g", Approve: &no, Role: "sre", Digest: "d"}, wrap(event.GateOf)},
		{event.Gate{What: "timed_out", Node: "g", After: "24h", Outcome: "rejected"}, wrap(event.GateOf)},
		{event.Gate{What: "approval_invalidated", Node: "g", Actors: []string{"bob"}, Digest: "d2", Revision: 3}, wrap(event.GateOf)},
		{event.Patch{What: "proposed", Patch: "UGF0Y2g6cA", Digest: "d", BaseRevision: 1, Changes: 2, Reason: "r", Approvals: []string{"production"}}, wrap(event.PatchOf)},
		{event.Patch{What: "decided", Patch: "UGF0Y2g6cA", Approve: &yes, Digest: "d"}, wrap(event.PatchOf)},
		{event.PlanRevised{Revision: 2, Digest: "d2", Parent: "d1", Patch: "UGF0Y2g6cA"}, wrap(event.PlanRevisedOf)},
		{event.Evidence{Node: "n", Item: "smoke", Result: "passed"}, wrap(event.EvidenceOf)},
		{event.Resource{What: "concluded", Resource: "tempo.instance/t", Outcome: "succeeded", Lifecycle: "active", Health: "healthy",
			DesiredState: map[string]any{"version": "2.4"}}, wrap(event.ResourceOf)},
		{event.Resource{What: "assessed", Resource: "linux.service/s", Health: "drifted", Previous: "healthy", Reason: "checksum",
			Diff: []capstan.FieldDrift{{Field: "config", Desired: "a", Observed: "b"}}}, wrap(event.ResourceOf)},
		{event.Binding{Node: "storage", Binding: "object-storage", Provider: "minio.instance/m", Resource: "UmVzb3VyY2U6bQ", Child: "T3A6Yw", Reason: "created"}, wrap(event.BindingOf)},
		{event.Intervention{Node: "n", Type: "manually_fixed", Verify: []string{"smoke"}}, wrap(event.InterventionOf)},
		{event.Analysis{Node: "n", Diagnosis: "d", Problems: []string{"keep-gate: no"}}, wrap(event.AnalysisOf)},
		{event.SecretRevealed{Artifact: "QXJ0", Name: "password", ProducedBy: "n", Reason: "debugging", ExpiresAt: "2026-12-06T01:00:00Z"}, wrap(event.SecretRevealedOf)},
		{event.CommandRejected{Command: "01a2", What: "gate.decide", Code: "CONFLICT", Reason: "gate g is approved"}, wrap(event.CommandRejectedOf)},
		{event.HostKeyTrusted{Node: "n", Target: "host", Host: "compute.node/w", Address: "10.0.0.1:22", Key: "ssh-ed25519 AAAA", Fingerprint: "SHA256:x"}, wrap(event.HostKeyTrustedOf)},
	}
	for _, c := range cases {
		t.Run(c.written.Kind(), func(t *testing.T) {
			stored := roundTrip(t, event.Record("someone", c.written))
			require.Equal(t, c.written.Kind(), stored.Type)
			require.Equal(t, "someone", stored.Actor)
			got, ok := c.read(stored)
			require.True(t, ok)
			require.Equal(t, c.written, got)
		})
	}
	_, ok := event.NodeOf(capstan.OperationEvent{Type: "gate.waiting"})
	require.False(t, ok, "a reader takes its own family only")
}

func wrap[T event.Event](f func(capstan.OperationEvent) (T, bool)) func(capstan.OperationEvent) (event.Event, bool) {
	return func(e capstan.OperationEvent) (event.Event, bool) { v, ok := f(e); return v, ok }
}

func roundTrip(t *testing.T, e capstan.OperationEvent) capstan.OperationEvent {
	data, err := json.Marshal(e)
	require.NoError(t, err)
	var out capstan.OperationEvent
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}
