package executor

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// TestFrontierFindsWhatAFullScanFinds runs random DAGs (with stages) to
// completion, finishing one started node at a time, and checks that the
// incremental ready set of the state always equals a full scan.
func TestFrontierFindsWhatAFullScanFinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		plan := randomPlan(rng)
		st := newState(&capstan.Operation{}, plan, nil, newIndex(plan))
		status := map[string]capstan.NodeRunStatus{}
		var running []string
		for steps := 0; ; steps++ {
			got := st.ready()
			want := ReadyNodes(plan, status)
			require.Equal(t, want, got, "round %d step %d", round, steps)
			for _, id := range got {
				status[id] = capstan.NodeRunning
				st.set(capstan.OperationNodeRun{NodeID: id, Status: capstan.NodeRunning})
				running = append(running, id)
			}
			if len(running) == 0 {
				break
			}
			i := rng.IntN(len(running))
			id := running[i]
			running = slices.Delete(running, i, i+1)
			status[id] = capstan.NodeSucceeded
			st.set(capstan.OperationNodeRun{NodeID: id, Status: capstan.NodeSucceeded})
		}
		require.Equal(t, capstan.OperationSucceeded, st.outcome(), "round %d: every node ran", round)
	}
}

// randomPlan builds a DAG of up to 30 jobs, some grouped into stages,
// with edges only from earlier to later nodes.
func randomPlan(rng *rand.Rand) *capstan.Plan {
	n := 2 + rng.IntN(28)
	p := &capstan.Plan{}
	for i := range n {
		p.Nodes = append(p.Nodes, capstan.PlanNode{ID: fmt.Sprintf("j%02d", i), Type: capstan.NodeJob})
	}
	for s := range rng.IntN(3) {
		lo := rng.IntN(n)
		hi := min(n, lo+1+rng.IntN(4))
		stage := capstan.PlanNode{ID: fmt.Sprintf("s%d", s), Type: capstan.NodeStage}
		for i := lo; i < hi; i++ {
			id := p.Nodes[i].ID
			if !slices.ContainsFunc(p.Nodes, func(x capstan.PlanNode) bool { return slices.Contains(x.Children, id) }) {
				stage.Children = append(stage.Children, id)
			}
		}
		if len(stage.Children) > 0 {
			p.Nodes = append(p.Nodes, stage)
			if lo > 0 && rng.IntN(2) == 0 {
				p.Edges = append(p.Edges, capstan.Edge{From: p.Nodes[rng.IntN(lo)].ID, To: stage.ID})
			}
		}
	}
	for i := 1; i < n; i++ {
		for range rng.IntN(3) {
			p.Edges = append(p.Edges, capstan.Edge{From: p.Nodes[rng.IntN(i)].ID, To: p.Nodes[i].ID})
		}
	}
	return p
}
