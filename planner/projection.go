package planner

import (
	"fmt"

	"github.com/capstan-dev/capstan"
)

// Summary is the simple-mode projection of a plan (SPEC §8).
type Summary struct {
	CurrentPhase   string
	Steps          int
	Progress       float64
	NeedsAttention []string
	Bindings       []string
}

// Summarize projects a plan for simple mode: what will happen, in a few
// lines. Once the plan has started, what happens is its operation's:
// WithRun puts the run's phase, progress and needs into the summary.
func Summarize(p *capstan.Plan) Summary {
	s := Summary{NeedsAttention: append([]string(nil), p.Problems...)}
	for _, n := range p.Nodes {
		if n.Type != capstan.NodeStage {
			s.Steps++
		}
		if n.Type == capstan.NodeGate && n.Gate != nil && p.Status.Editable() { // ahead of it, not behind
			s.NeedsAttention = append(s.NeedsAttention, fmt.Sprintf("gate %s will need approval from %v", n.ID, n.Gate.RequiredRoles))
		}
	}
	switch p.Status {
	case capstan.PlanInvalid:
		s.CurrentPhase = "planning failed"
	case capstan.PlanReady, capstan.PlanApproved:
		s.CurrentPhase = "ready to start"
	default:
		s.CurrentPhase = string(p.Status)
	}
	if p.Status == capstan.PlanCompleted {
		s.Progress = 1
	}
	for _, b := range p.Bindings {
		if b.Parent != "" {
			continue
		}
		var line string
		switch b.Status {
		case capstan.BindingResolved:
			line = fmt.Sprintf("%s: use %s", b.ID, b.Provider.ResourceKey)
		case capstan.BindingPendingSubOperation:
			line = fmt.Sprintf("%s: create with %s", b.ID, b.SubOperation.Scenario)
		default:
			line = fmt.Sprintf("%s: cannot be met", b.ID)
		}
		s.Bindings = append(s.Bindings, line)
	}
	return s
}

// WithRun is the summary of a started plan: its operation's current
// phase, progress and what needs attention now, in place of what the plan
// alone foresaw.
func (s Summary) WithRun(phase string, progress float64, needsAttention []string) Summary {
	s.CurrentPhase, s.Progress = phase, progress
	s.NeedsAttention = append([]string(nil), needsAttention...)
	return s
}

// VertexKind is what a vertex of the capability graph stands for.
type VertexKind string

// Vertex kinds of the capability graph.
const (
	VertexRequirement VertexKind = "requirement"
	VertexResource    VertexKind = "resource"
	VertexScenario    VertexKind = "scenario"
)

// Graph is the advanced-mode capability graph; GraphQL shows it as is
// (gqlgen.yml binds CapabilityGraph, CapabilityVertex and its kind, and
// CapabilityGraphEdge to these types).
type Graph struct {
	Vertices []GraphVertex
	Edges    []GraphEdge
}

// GraphVertex is a requirement, a resource or a scenario.
type GraphVertex struct {
	Key   string
	Kind  VertexKind
	Label string
	// Status is the binding's or the plan's status; "" for a resource.
	Status string
}

// StatusOrNil is Status, nil when there is none (GraphQL's null).
func (v GraphVertex) StatusOrNil() *string {
	if v.Status == "" {
		return nil
	}
	return &v.Status
}

// GraphEdge relates two vertices (requires, bound to, created by).
type GraphEdge struct{ From, To, Label string }

// CapabilityGraphOf is CapabilityGraph as one value, never nil slices.
func CapabilityGraphOf(p *capstan.Plan) *Graph {
	vs, es := CapabilityGraph(p)
	if vs == nil {
		vs = []GraphVertex{}
	}
	if es == nil {
		es = []GraphEdge{}
	}
	return &Graph{Vertices: vs, Edges: es}
}

// CapabilityGraph projects the resolved capability graph: each requirement,
// the resource or scenario it is bound to, and which scenario requires what.
func CapabilityGraph(p *capstan.Plan) ([]GraphVertex, []GraphEdge) {
	var vs []GraphVertex
	var es []GraphEdge
	seen := map[string]bool{}
	add := func(v GraphVertex) {
		if !seen[v.Key] {
			seen[v.Key] = true
			vs = append(vs, v)
		}
	}
	add(GraphVertex{Key: "scenario:" + p.ScenarioRef, Kind: VertexScenario, Label: p.ScenarioRef, Status: string(p.Status)})
	for _, b := range p.Bindings {
		req := "requirement:" + b.ID
		add(GraphVertex{Key: req, Kind: VertexRequirement, Label: b.Requirement.Capability, Status: string(b.Status)})
		es = append(es, GraphEdge{From: "scenario:" + b.Scenario, To: req, Label: "requires"})
		switch {
		case b.Provider != nil:
			add(GraphVertex{Key: "resource:" + b.Provider.ResourceKey, Kind: VertexResource, Label: b.Provider.ResourceKey})
			es = append(es, GraphEdge{From: req, To: "resource:" + b.Provider.ResourceKey, Label: "bound to"})
		case b.SubOperation != nil:
			add(GraphVertex{Key: "scenario:" + b.SubOperation.Scenario, Kind: VertexScenario, Label: b.SubOperation.Scenario, Status: "pending"})
			es = append(es, GraphEdge{From: req, To: "scenario:" + b.SubOperation.Scenario, Label: "created by"})
		}
	}
	return vs, es
}
