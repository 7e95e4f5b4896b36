package dag_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/dag"
)

func node(id string, after ...string) capstan.PlanNode {
	return capstan.PlanNode{ID: id, Type: capstan.NodeJob, Title: id, After: after}
}

func stage(id string, children ...string) capstan.PlanNode {
	return capstan.PlanNode{ID: id, Type: capstan.NodeStage, Title: id, Children: children}
}

func TestCheckAndOrder(t *testing.T) {
	tests := []struct {
		name     string
		nodes    []capstan.PlanNode
		edges    []capstan.Edge
		order    []string
		problems []string
	}{
		{"chain", []capstan.PlanNode{node("c", "b"), node("a"), node("b", "a")}, nil, []string{"a", "b", "c"}, nil},
		{"diamond ties by id", []capstan.PlanNode{node("d", "b", "c"), node("c", "a"), node("b", "a"), node("a")}, nil, []string{"a", "b", "c", "d"}, nil},
		{"explicit edges", []capstan.PlanNode{node("x"), node("y")}, []capstan.Edge{{From: "y", To: "x"}}, []string{"y", "x"}, nil},
		{"stage orders around its children",
			[]capstan.PlanNode{node("pre"), stage("s", "c1", "c2"), node("c1"), node("c2", "c1"), node("post", "s")},
			[]capstan.Edge{{From: "pre", To: "s"}}, []string{"pre", "s", "c1", "c2", "post"}, nil},
		{"two-node cycle", []capstan.PlanNode{node("a", "b"), node("b", "a")}, nil, nil, []string{"edge a -> b closes a cycle: b -> a -> b"}},
		{"child waits for its own stage", []capstan.PlanNode{stage("s", "c"), node("c", "s")}, nil, nil, []string{"edge s -> c closes a cycle: c -> s -> c"}},
		{"stage waits for its child", []capstan.PlanNode{stage("s", "c"), node("c")}, []capstan.Edge{{From: "c", To: "s"}}, nil, []string{"edge c -> s closes a cycle: s -> c -> s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.problems, dag.Check(tt.nodes, tt.edges))
			order, err := dag.Order(tt.nodes, tt.edges)
			if tt.problems != nil {
				require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.order, order)
		})
	}
}
