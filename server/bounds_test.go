package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func repeat(s string, n int) string { return strings.Repeat(s, n) }

func aliases(n int, field string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "a%d: %s ", i, field)
	}
	return b.String()
}

// chain is a selection nested n levels deep: { a { a { … } } }.
func chain(n int) string {
	return repeat("resource(key: \"x\") { ", 1) + repeat("relationships { target { ", (n-2)/2) + "key" + repeat(" } }", (n-2)/2) + " }"
}

func TestCheckShape(t *testing.T) {
	l := DefaultLimits
	// fragment F0 spreads F1 five times, F1 spreads F2 five times, …:
	// 5^6 fields from a few tokens, none repeated more than 5 times.
	multiplying := `{ resource(key: "x") { ...F0 } } `
	for i := range 6 {
		multiplying += fmt.Sprintf("fragment F%d on Resource { %s } ", i, repeat(fmt.Sprintf("relationships { target { ...F%d } } ", i+1), 5))
	}
	multiplying += "fragment F6 on Resource { key }"
	tests := []struct {
		name, query, reason string
	}{
		{"typical", `query($id: ID!) { operation(id: $id) { id status plan { nodes { key type } } timeline(first: 20) { edges { cursor node { sequence type } } } } }`, ""},
		{"too large", "{ viewer { actor } }" + repeat(" ", l.MaxQueryBytes), ReasonQueryTooLarge},
		{"too many tokens", "{" + repeat("viewer{actor}", 4000) + "}", ReasonTokenLimit},
		{"too many root fields", "{ " + aliases(21, "__typename") + "}", ReasonRootFieldLimit},
		{"too many aliases", "{ viewer { " + aliases(31, "actor") + "} }", ReasonAliasLimit},
		{"too deep", "{ " + chain(20) + " }", ReasonDepthLimit},
		{"duplicated fields", "{ viewer { " + repeat("actor ", 11) + "} }", ReasonRepeatLimit},
		{"duplicates through fragments", "{ viewer { ...A ...A ...A } } fragment A on Viewer { actor actor actor actor }", ReasonRepeatLimit},
		{"duplicates in an unused fragment", "{ viewer { actor } } fragment A on Viewer { " + repeat("actor ", 50) + "}", ReasonRepeatLimit},
		{"fragments that multiply", multiplying, ReasonFieldLimit},
		{"a fragment cycle is left to validation", "{ viewer { ...A } } fragment A on Viewer { ...B } fragment B on Viewer { ...A }", ""},
		{"a syntax error is left to the parser", "{ viewer { ", ""},
		{"ten repeats pass", "{ viewer { " + repeat("actor ", 10) + "} }", ""},
		{"__typename in every inline fragment passes (Apollo adds it)", "{ node(id: \"x\") { __typename " + repeat("... on Operation { __typename } ", 20) + "} }", ""},
		{"__typename has a bound too", "{ viewer { " + repeat("__typename ", 65) + "} }", ReasonRepeatLimit},
		{"a field aliased __typename is any field", "{ viewer { " + repeat("__typename: actor ", 11) + "} }", ReasonRepeatLimit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckShape(tc.query, l)
			if tc.reason == "" {
				require.Nil(t, err)
				return
			}
			require.NotNil(t, err)
			require.Equal(t, tc.reason, err.Extensions["code"], err.Message)
		})
	}
}

func TestOperationCost(t *testing.T) {
	tests := []struct {
		name  string
		query string
		vars  map[string]any
		cost  int
	}{
		{"scalars", `{ viewer { actor organization } }`, nil, 3},
		// resources 1, totalCount 1, edges 1 + 5 × (node 1 + key 1).
		{"a connection sizes its edges by first", `{ resources(first: 5) { totalCount edges { node { key } } } }`, nil, 1 + 1 + 1 + 5*2},
		{"the default first", `{ resources { edges { cursor } } }`, nil, 1 + 1 + 50},
		{"a null first is the default", `{ resources(first: null) { edges { cursor } } }`, nil, 1 + 1 + 50},
		{"a null variable is the default", `query($n: Int) { resources(first: $n) { edges { cursor } } }`, map[string]any{"n": nil}, 1 + 1 + 50},
		{"first from a variable", `query($n: Int) { resources(first: $n) { edges { cursor } } }`, map[string]any{"n": 200}, 1 + 1 + 200},
		{"nested catalog lists multiply", `{ resource(key: "x") { relationships { target { dependencies: relationships { type } } } } }`, nil, 1 + 1 + 50*(1+(1+50*1))},
		{"a catalog list assumes 50", `{ resource(key: "x") { relationships { type } } }`, nil, 1 + 1 + 50*1},
		{"a plain list assumes 10", `{ scenarioPacks { edges { node { scenarios { id } } } } }`, nil, 1 + 1 + 50*(1+(1+10*1))},
		{"assumedSize", `query($id: ID!) { plan(id: $id) { nodes { key } } }`, map[string]any{"id": "x"}, 1 + 1 + 500*1},
		{"lists multiply", `{ operations(first: 10) { edges { node { nodeRuns { node } } } } }`, nil, 1 + 1 + 10*(1+(1+500*1))},
		{"@cost weighs computed fields", `query($id: ID!) { plan(id: $id) { capabilityGraph { edges { from } } } }`, map[string]any{"id": "x"}, 1 + 5000 + (1 + 10*1)},
		{"a plan read per item is paid per item", `{ operations(first: 10) { edges { node { plan { id } } } } }`, nil, 1 + 1 + 10*(1+(20+1))},
		{"aliases each cost", `{ a: resources(first: 500) { edges { cursor } } b: resources(first: 500) { edges { cursor } } }`, nil, 2 * (1 + 1 + 500)},
		// resourceGraph 500 + 100 per hop; nodes sized by first: 1 + 30 × (resource 1 + key 1).
		{"a walk pays for its hops", `{ resourceGraph(root: "x", depth: 3, first: 30) { nodes { resource { key } } } }`, nil, 500 + 300 + 1 + 30*2},
		{"a walk's default depth", `{ resourceGraph(root: "x") { omittedTotal } }`, nil, 500 + 200 + 1},
		{"ten hops cost five times two", `{ resourceGraph(root: "x", depth: 10) { omittedTotal } }`, nil, 500 + 1000 + 1},
		{"impact walks ten hops", `{ impact(resource: "x") { total } }`, nil, 500 + 1000 + 1},
		{"paths: hops from depth, paths from max", `{ paths(from: "x", to: "y", max: 5, depth: 4) { hops { from } } }`, nil, 500 + 400 + 5*(1+10*1)},
		{"@include(if: false) costs nothing", `query($h: Boolean!) { resource(key: "x") { key relationships @include(if: $h) { type } } }`, map[string]any{"h": false}, 1 + 1},
		{"@include(if: true) costs", `query($h: Boolean!) { resource(key: "x") { key relationships @include(if: $h) { type } } }`, map[string]any{"h": true}, 1 + 1 + 1 + 50*1},
		{"@skip(if: true) costs nothing", `{ resource(key: "x") { key ... on Resource @skip(if: true) { relationships { type } } } }`, nil, 1 + 1},
		{"fragments cost where they are spread", `{ resources(first: 2) { edges { ...E } } } fragment E on ResourceEdge { node { key } }`, nil, 1 + 1 + 2*2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oc := operationContext(t, tc.query, tc.vars)
			require.Equal(t, tc.cost, OperationCost(oc.Operation, tc.vars))
		})
	}
	t.Run("aliased pages add up", func(t *testing.T) {
		q := "{ " + aliases(20, "resources(first: 500) { edges { node { key name relationships { type } } } }") + "}"
		oc := operationContext(t, q, nil)
		limit := &costLimit{limit: DefaultLimits.MaxCost}
		err := limit.MutateOperationContext(context.Background(), oc)
		require.NotNil(t, err)
		require.Equal(t, ReasonCostLimit, err.Extensions["code"])
	})
}
