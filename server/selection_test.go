package server

import (
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"

	"github.com/capstan-dev/capstan/graph"
)

// operationContext parses and validates a document against the schema, as
// the executor does before a subscription starts.
func operationContext(t *testing.T, query string, variables map[string]any) *graphql.OperationContext {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(graph.NewExecutableSchema(graph.Config{}).Schema(), query)
	require.Empty(t, errs)
	return &graphql.OperationContext{RawQuery: query, Doc: doc, Operation: doc.Operations[0], Variables: variables}
}

func TestSelectionKey(t *testing.T) {
	const events = `subscription($op: ID!, $after: String) { operationEvents(operation: $op, after: $after) { cursor node { sequence type } } }`
	const withTime = `subscription($op: ID!, $t: Boolean!) { operationEvents(operation: $op) { cursor node { sequence at @include(if: $t) } } }`
	const viaFragment = `subscription($op: ID!) { operationEvents(operation: $op) { ...E } } fragment E on OperationEventEdge { cursor node { sequence type } }`
	const viaOtherFragment = `subscription($op: ID!) { operationEvents(operation: $op) { ...E } } fragment E on OperationEventEdge { cursor node { sequence actor } }`
	const aliased = `subscription($op: ID!) { events: operationEvents(operation: $op) { cursor node { sequence type } } }`
	const literal = `subscription { operationEvents(operation: "T3A6MQ==", after: "4") { cursor node { sequence type } } }`
	type side struct {
		query string
		vars  map[string]any
	}
	tests := []struct {
		name  string
		a, b  side
		share bool
	}{
		{"other operation and cursor, same selection", side{events, map[string]any{"op": "x", "after": "3"}}, side{events, map[string]any{"op": "y"}}, true},
		{"root arguments written inline", side{events, map[string]any{"op": "x"}}, side{literal, nil}, true},
		{"same variable in a directive", side{withTime, map[string]any{"op": "x", "t": true}}, side{withTime, map[string]any{"op": "y", "t": true}}, true},
		{"a directive's variable differs", side{withTime, map[string]any{"op": "x", "t": true}}, side{withTime, map[string]any{"op": "x", "t": false}}, false},
		{"other fields", side{events, map[string]any{"op": "x"}}, side{withTime, map[string]any{"op": "x", "t": true}}, false},
		{"an alias on the root field", side{events, map[string]any{"op": "x"}}, side{aliased, map[string]any{"op": "x"}}, false},
		{"fragments of one name, other fields", side{viaFragment, map[string]any{"op": "x"}}, side{viaOtherFragment, map[string]any{"op": "x"}}, false},
		{"a fragment's fields spelled inline are not matched (conservative)", side{viaFragment, map[string]any{"op": "x"}}, side{events, map[string]any{"op": "x"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := selectionKey(operationContext(t, tt.a.query, tt.a.vars))
			b := selectionKey(operationContext(t, tt.b.query, tt.b.vars))
			require.NotEmpty(t, a)
			require.NotEmpty(t, b)
			require.Equal(t, tt.share, a == b, "keys:\n%s\n%s", a, b)
		})
	}
}

func TestSelectionKeyOfNoSingleRootFieldIsEmpty(t *testing.T) {
	oc := operationContext(t, `query { a: __typename b: __typename }`, nil)
	require.Empty(t, selectionKey(oc))
	require.Empty(t, selectionKey(&graphql.OperationContext{}))
}
