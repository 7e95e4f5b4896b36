package server_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/gqlws"
)

// typedEvent is the selection of the typed event contract (docs/EVENTS.md).
const typedEvent = `sequence type __typename
  ... on OperationStatusEvent { operationStatus failedNode plan { id } revision }
  ... on NodeEvent { node runStatus attempt revision }
  ... on GateEvent { node approve role digest }
  ... on EvidenceEvent { node item result }
  ... on ResourceEvent { resource { key } lifecycle health outcome }`

type typedEdge struct {
	Cursor string
	Node   struct {
		Sequence        int64
		Type            string
		Typename        string `json:"__typename"`
		OperationStatus *string
		RunStatus       *string
		FailedNode      *string
		Node            *string
		Approve         *bool
		Role            *string
		Result          *string
		Lifecycle       *string
		Plan            *struct{ ID string }
		Resource        *struct{ Key string }
		Revision        *int
		Attempt         *int
		Outcome         *string
		Item            *string
		Digest          *string
		Health          *string
	}
}

// TestTypedEventContract: the query and the subscription answer the same
// typed events, each kind its type, typed fields and references filled.
func TestTypedEventContract(t *testing.T) {
	env := startLive(t, 0)
	op := env.startMinio(t)
	waitForStatus(t, env, op, "WAITING")
	env.approve(t, op)
	waitForStatus(t, env, op, "SUCCEEDED")

	r := post(t, env.ts, adminToken, `query($op: ID!) { operation(id: $op) { plan { id } timeline(first: 500) { edges { cursor node { `+typedEvent+` } } } } }`, map[string]any{"op": op})
	require.Empty(t, r.Errors, "%+v", r.Errors)
	var queried struct {
		Operation struct {
			Plan     struct{ ID string }
			Timeline struct{ Edges []typedEdge }
		}
	}
	data, _ := json.Marshal(r.Data)
	require.NoError(t, json.Unmarshal(data, &queried))
	edges := queried.Operation.Timeline.Edges
	require.NotEmpty(t, edges)
	kinds := map[string]string{}
	for _, e := range edges {
		n := e.Node
		kinds[n.Type] = n.Typename
		switch n.Type {
		case "operation.created":
			require.Equal(t, "OperationStatusEvent", n.Typename)
			require.Nil(t, n.OperationStatus)
			require.Equal(t, queried.Operation.Plan.ID, n.Plan.ID, "the reference resolves to the plan")
		case "operation.succeeded":
			require.Equal(t, "SUCCEEDED", *n.OperationStatus)
		case "gate.decided":
			require.Equal(t, "GateEvent", n.Typename)
			require.True(t, *n.Approve)
			require.Equal(t, "sre", *n.Role)
			require.NotEmpty(t, *n.Digest)
		case "node.succeeded":
			require.Equal(t, "NodeEvent", n.Typename)
			require.Equal(t, "SUCCEEDED", *n.RunStatus)
			require.NotEmpty(t, *n.Node)
		case "evidence.recorded":
			require.Equal(t, "EvidenceEvent", n.Typename)
			require.Contains(t, []string{"PASSED", "FAILED", "INCONCLUSIVE"}, *n.Result)
		case "resource.concluded":
			require.Equal(t, "ResourceEvent", n.Typename)
			require.Equal(t, "minio.instance/m1", n.Resource.Key)
			require.Equal(t, "ACTIVE", *n.Lifecycle)
			require.Equal(t, "SUCCEEDED", *n.Outcome)
		}
	}
	for _, k := range []string{"operation.created", "operation.succeeded", "gate.decided", "node.succeeded", "evidence.recorded", "resource.concluded"} {
		require.Contains(t, kinds, k)
	}

	// The subscription replays the same events as the same types.
	c := env.dial(t, adminToken)
	require.NoError(t, c.Subscribe("s", `subscription($op: ID!) { operationEvents(operation: $op) { cursor node { `+typedEvent+` } } }`, map[string]any{"op": op}))
	for _, want := range edges {
		m, err := c.Next()
		require.NoError(t, err)
		require.Equal(t, "next", m.Type, "%s", m.Payload)
		var got struct{ OperationEvents typedEdge }
		require.NoError(t, gqlws.Data(m, &got))
		require.Equal(t, want, got.OperationEvents)
	}
}
