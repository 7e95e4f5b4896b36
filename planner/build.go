package planner

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/dag"
	"github.com/capstan-dev/capstan/playbook"
)

// SubOperationNodeID names the node that creates a pending binding's provider.
func SubOperationNodeID(bindingID string) string { return "create-" + bindingID }

// BuildGraph copies the scenario's template (never sharing memory with it:
// a scenario holds no runtime state, invariant 2) and adds a sub_operation
// node before the consumers of each top-level pending binding.
func BuildGraph(sc *capstan.Scenario, bindings []capstan.ResourceBinding) ([]capstan.PlanNode, []capstan.Edge) {
	nodes := deepCopy(sc.Plan.Nodes)
	edges := capstan.AllEdges(nodes, sc.Plan.Edges)
	for i := range nodes {
		nodes[i].After = nil
	}
	roots := rootsOf(nodes, edges)
	for i := range bindings {
		b := &bindings[i]
		if b.Parent != "" || b.Status != capstan.BindingPendingSubOperation {
			continue
		}
		id := SubOperationNodeID(b.ID)
		b.SubOperation.NodeID = id
		nodes = append(nodes, capstan.PlanNode{
			ID: id, Type: capstan.NodeSubOperation,
			Title:    fmt.Sprintf("Create %s with %s", b.Requirement.Capability, b.SubOperation.Scenario),
			Produces: []string{b.Requirement.Capability},
			SubOperation: &capstan.SubOperationSpec{
				Scenario: b.SubOperation.Scenario, Requirement: b.ID, ExpectedCapability: b.Requirement.Capability,
			},
		})
		consumers := 0
		for _, n := range nodes {
			if slices.Contains(n.Requires, b.ID) {
				edges = append(edges, capstan.Edge{From: id, To: n.ID})
				consumers++
			}
		}
		if consumers == 0 {
			for _, r := range roots {
				edges = append(edges, capstan.Edge{From: id, To: r})
			}
		}
	}
	return nodes, edges
}

// rootsOf returns nodes with no incoming edge that no stage contains.
func rootsOf(nodes []capstan.PlanNode, edges []capstan.Edge) []string {
	inbound := map[string]bool{}
	for _, e := range edges {
		inbound[e.To] = true
	}
	for _, n := range nodes {
		for _, c := range n.Children {
			inbound[c] = true
		}
	}
	var out []string
	for _, n := range nodes {
		if !inbound[n.ID] {
			out = append(out, n.ID)
		}
	}
	return out
}

func deepCopy[T any](v T) T {
	data, err := json.Marshal(v)
	if err != nil {
		panic("planner: plan template not serializable: " + err.Error())
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		panic("planner: plan template not deserializable: " + err.Error())
	}
	return out
}

// Problems lists every reason a plan cannot run, derived from its state:
// bindings that failed or stayed unresolved, sub-operation nodes whose
// scenario is not installed, and graph problems.
func Problems(p *capstan.Plan) []string {
	return append(bindingProblems(p), GraphProblems(p)...)
}

// GraphProblems validates a plan's graph: node settings, references to
// nodes and bindings, and acyclicity.
func GraphProblems(p *capstan.Plan) []string {
	var probs capstan.Problems
	reqs := map[string]bool{}
	for _, b := range p.Bindings {
		reqs[b.ID] = true
	}
	capstan.ValidateGraph(p.Nodes, p.Edges, reqs, &probs)
	probs = append(probs, playbook.ProblemsOf(p.Nodes)...)
	probs = append(probs, dag.Check(p.Nodes, p.Edges)...)
	return probs
}

// pinSubOperations pins each template sub_operation node to a scenario
// version and resolves that scenario's requirements: those the node
// requires from the parent are inherited, the rest are resolved anew.
func (r *resolution) pinSubOperations(ctx context.Context, plan *capstan.Plan) error {
	for i := range plan.Nodes {
		n := &plan.Nodes[i]
		if n.Type != capstan.NodeSubOperation || n.SubOperation == nil || n.SubOperation.Requirement != "" {
			continue
		}
		sc, err := r.planner.Catalog.GetScenario(ctx, r.org, n.SubOperation.Scenario)
		if capstan.ErrorCode(err) == capstan.ENOTFOUND {
			continue // left unpinned; Problems reports it
		}
		if err != nil {
			return err
		}
		n.SubOperation.Scenario = sc.Ref()
		inherited := map[string]*capstan.ResourceBinding{}
		for _, req := range n.Requires {
			if b := plan.Binding(req); b != nil {
				inherited[req] = b
			}
		}
		children, err := r.scenario(ctx, sc, n.ID+"/", inherited, []string{plan.ScenarioRef, sc.Ref()})
		if err != nil {
			return err
		}
		plan.Bindings = append(plan.Bindings, children...)
	}
	return nil
}
