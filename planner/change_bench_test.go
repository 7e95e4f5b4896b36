package planner_test

import (
	"fmt"
	"testing"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/planner"
)

// bigPlan is a running plan of n job nodes in layers of ten, a gate in
// the middle, the first half succeeded and one node failed.
func bigPlan(n int) (*capstan.Plan, map[string]capstan.OperationNodeRun) {
	p := &capstan.Plan{Meta: capstan.Meta{ID: "big"}, IntentID: "i", ScenarioRef: "big@1.0.0", Status: capstan.PlanRunning, Revision: 1,
		Customizations: capstan.Customizations{BaseTemplate: "big@1.0.0"}}
	runs := map[string]capstan.OperationNodeRun{}
	for i := range n {
		id := fmt.Sprintf("n%03d", i)
		node := capstan.PlanNode{ID: id, Type: capstan.NodeJob, Title: id, Parameters: map[string]any{"i": i},
			Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}, Outputs: capstan.JobOutputs{Evidence: []capstan.Probe{{Name: id + "-ok", Type: "sim"}}}}}
		if i == n/2 {
			node = capstan.PlanNode{ID: id, Type: capstan.NodeGate, Title: id, Gate: &capstan.GateSpec{Type: "approval", Reason: "r", RequiredRoles: []string{"sre"}}}
		}
		p.Nodes = append(p.Nodes, node)
		if i >= 10 {
			p.Edges = append(p.Edges, capstan.Edge{From: fmt.Sprintf("n%03d", i-10), To: id})
		}
		if i < n/2-10 {
			runs[id] = capstan.OperationNodeRun{NodeID: id, Status: capstan.NodeSucceeded, Attempts: 1}
		}
	}
	failed := fmt.Sprintf("n%03d", n/2-5)
	runs[failed] = capstan.OperationNodeRun{NodeID: failed, Status: capstan.NodeFailed, Attempts: 1}
	p.Digest = capstan.ContentOf(p).Digest()
	return p, runs
}

// BenchmarkApplyChanges: validate and make the next revision of a running
// 500-node plan (the seed's §8 shape: insert a template, retry a node).
func BenchmarkApplyChanges(b *testing.B) {
	p, runs := bigPlan(500)
	failed := fmt.Sprintf("n%03d", 500/2-5)
	anchor := fmt.Sprintf("n%03d", 500/2-15)
	cs := planner.ChangeSet{Base: p, Started: true, Runs: runs, Templates: map[string]*capstan.NodeTemplate{"configure-registry-mirror": mirrorTemplate()},
		Changes: []capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: anchor, Template: "configure-registry-mirror"}, {Op: capstan.ChangeRetry, Node: failed}}}
	b.ReportAllocs()
	for b.Loop() {
		res := planner.ApplyChanges(cs)
		if len(res.Problems) > 0 {
			b.Fatal(res.Problems)
		}
		if _, err := planner.Revise(p, res, cs.Changes, capstan.RevisionSource{Actor: "bench", Kind: capstan.RevisionPatch}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanDiff compares two revisions of a 500-node plan.
func BenchmarkPlanDiff(b *testing.B) {
	p, runs := bigPlan(500)
	cs := planner.ChangeSet{Base: p, Started: true, Runs: runs, Templates: map[string]*capstan.NodeTemplate{"configure-registry-mirror": mirrorTemplate()},
		Changes: []capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: "n100", Template: "configure-registry-mirror"},
			{Op: capstan.ChangeSetParameters, Node: "n400", Parameters: map[string]any{"replicas": 3}}}}
	res := planner.ApplyChanges(cs)
	if len(res.Problems) > 0 {
		b.Fatal(res.Problems)
	}
	next, err := planner.Revise(p, res, cs.Changes, capstan.RevisionSource{Actor: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	a, z := capstan.Snapshot(p, ""), capstan.Snapshot(next, p.Digest)
	b.ReportAllocs()
	for b.Loop() {
		d := capstan.Diff(a, z)
		if len(d.NodesAdded) != 1 || len(d.NodesChanged) != 1 {
			b.Fatal(d)
		}
	}
}
