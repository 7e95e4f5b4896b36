// Package eval scores an analyzer on failures drawn from the bundled
// packs' failure modes (cases.yaml): does it name the cause, propose the
// expected patch, propose nothing unsafe, cite only what exists, and at
// what cost. A proposal is judged by the planner's own validator
// (planner.ApplyChanges), the check every person's patch passes before it
// is PROPOSED.
package eval

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
	"github.com/capstan-dev/capstan/pack"
	"github.com/capstan-dev/capstan/packs"
	"github.com/capstan-dev/capstan/planner"
)

//go:embed cases.yaml
var casesYAML []byte

// Case is one failure and what a good answer holds.
type Case struct {
	ID       string `yaml:"id"`
	About    string `yaml:"about"`
	Scenario string `yaml:"scenario"`
	Failed   struct {
		Node   string `yaml:"node"`
		Error  string `yaml:"error"`
		Output string `yaml:"output"`
	} `yaml:"failed"`
	Evidence []struct {
		Item   string `yaml:"item"`
		Result string `yaml:"result"`
	} `yaml:"evidence"`
	Expect struct {
		Kind      string   `yaml:"kind"`
		Diagnosis []string `yaml:"diagnosis"`
		Patch     []struct {
			Op       string `yaml:"op"`
			Node     string `yaml:"node"`
			Template string `yaml:"template"`
		} `yaml:"patch"`
	} `yaml:"expect"`
}

// Cases returns the evaluation set.
func Cases() ([]Case, error) {
	var doc struct {
		Cases []Case `yaml:"cases"`
	}
	if err := yaml.Unmarshal(casesYAML, &doc); err != nil {
		return nil, err
	}
	return doc.Cases, nil
}

// Bundle is what the cases run against: the bundled packs' scenarios and
// node templates.
type Bundle struct {
	scenarios map[string]*capstan.Scenario
	templates map[string]*capstan.NodeTemplate
}

// LoadBundle loads the bundled packs.
func LoadBundle() (*Bundle, error) {
	ps, problems := pack.LoadSet(packs.FS, packs.Order, nil)
	if len(problems) > 0 {
		return nil, pack.ProblemsError("bundled packs", problems)
	}
	b := &Bundle{scenarios: map[string]*capstan.Scenario{}, templates: map[string]*capstan.NodeTemplate{}}
	for _, p := range ps {
		for i := range p.Scenarios {
			b.scenarios[p.Scenarios[i].ID] = &p.Scenarios[i] // the newest, as Order loads older first
			b.scenarios[p.Scenarios[i].Ref()] = &p.Scenarios[i]
		}
		for i := range p.NodeTemplates {
			t := p.NodeTemplates[i]
			t.Pack = p.Ref()
			b.templates[t.Name] = &t
		}
	}
	return b, nil
}

// Input is the analysis input of a case: its scenario's plan, the node
// runs up to the failure, the failed evidence and the output's tail.
func (b *Bundle) Input(c Case) (analysis.Input, *capstan.Plan, error) {
	sc := b.scenarios[c.Scenario]
	if sc == nil {
		return analysis.Input{}, nil, fmt.Errorf("case %s: no bundled scenario %s", c.ID, c.Scenario)
	}
	plan := &capstan.Plan{ScenarioRef: sc.Ref(), Status: capstan.PlanReady, Revision: 1, Nodes: slices.Clone(sc.Plan.Nodes), Edges: slices.Clone(sc.Plan.Edges)}
	for _, r := range sc.Requires { // bound, as a plan that started is
		plan.Bindings = append(plan.Bindings, capstan.ResourceBinding{ID: r.ID, Scenario: sc.Ref(), Requirement: r, Status: capstan.BindingResolved,
			Provider: &capstan.BoundProvider{ResourceKey: "provider/" + r.ID, Capability: r.Capability}, Reason: "evaluation"})
	}
	if plan.Node(c.Failed.Node) == nil {
		return analysis.Input{}, nil, fmt.Errorf("case %s: scenario %s has no node %s", c.ID, c.Scenario, c.Failed.Node)
	}
	in := analysis.Input{Org: "eval", OperationID: "op-" + c.ID, Question: "why did " + c.Failed.Node + " fail, and what would fix it?", Plan: plan}
	for _, id := range before(plan, c.Failed.Node) {
		in.Runs = append(in.Runs, capstan.OperationNodeRun{NodeID: id, Status: capstan.NodeSucceeded, Attempts: 1})
	}
	in.Runs = append(in.Runs, capstan.OperationNodeRun{NodeID: c.Failed.Node, Status: capstan.NodeFailed, Attempts: 2, Error: c.Failed.Error})
	for i, e := range c.Evidence {
		in.Evidence = append(in.Evidence, capstan.Evidence{Meta: capstan.Meta{ID: fmt.Sprintf("ev-%s-%d", c.ID, i+1)}, ProducedBy: c.Failed.Node, Item: e.Item, Result: e.Result})
	}
	if c.Failed.Output != "" {
		in.Artifacts = []analysis.Artifact{{Artifact: capstan.Artifact{Name: "output", ProducedBy: c.Failed.Node}, Content: []byte(c.Failed.Output)}}
	}
	for _, t := range b.templates {
		in.Templates = append(in.Templates, *t)
	}
	slices.SortFunc(in.Templates, func(a, b capstan.NodeTemplate) int { return strings.Compare(a.Name, b.Name) })
	return in, plan, nil
}

// before lists the nodes that must end before id: its ancestors.
func before(p *capstan.Plan, id string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		for _, e := range p.Edges {
			if e.To == n && !seen[e.From] {
				seen[e.From] = true
				walk(e.From)
			}
		}
	}
	walk(id)
	var out []string
	for _, n := range p.Nodes {
		if seen[n.ID] {
			out = append(out, n.ID)
		}
	}
	return out
}

// Score is one case's outcome.
type Score struct {
	Case      string
	Err       string // the analyzer failed (typed error message)
	Diagnosis bool   // names the cause
	Patch     bool   // the expected patch (or none), and the validator accepts it
	Unsafe    bool   // a proposed change the validator refuses under a governance rule
	Proposed  bool   // would reach PROPOSED: the validator accepts it
	Dropped   int
	Tokens    int64
	Latency   time.Duration
	Problems  []string
}

// Run scores analyzer on every case.
func Run(ctx context.Context, b *Bundle, cases []Case, analyzer analysis.Analyzer) []Score {
	out := make([]Score, 0, len(cases))
	for _, c := range cases {
		out = append(out, b.score(ctx, c, analyzer))
	}
	return out
}

func (b *Bundle) score(ctx context.Context, c Case, analyzer analysis.Analyzer) Score {
	s := Score{Case: c.ID}
	in, plan, err := b.Input(c)
	if err != nil {
		s.Err = err.Error()
		return s
	}
	start := time.Now()
	a, err := analyzer.Analyze(ctx, in)
	s.Latency = time.Since(start)
	if err != nil {
		s.Err = capstan.ErrorMessage(err)
		return s
	}
	if a.Model != nil {
		s.Tokens = a.Model.PromptTokens + a.Model.CompletionTokens
	}
	s.Dropped = a.DroppedFindings
	text := strings.ToLower(a.Diagnosis)
	s.Diagnosis = slices.ContainsFunc(c.Expect.Diagnosis, func(w string) bool { return strings.Contains(text, strings.ToLower(w)) })
	if err := a.Check(func(id string) bool { return plan.Node(id) != nil }); err != nil {
		s.Problems = capstan.ErrorDetails(err)
		return s
	}
	if len(a.ProposedPatch) > 0 {
		res := planner.ApplyChanges(b.changeSet(plan, in, a.ProposedPatch))
		s.Proposed = len(res.Problems) == 0
		for _, p := range res.Problems {
			s.Unsafe = s.Unsafe || p.Forbidden()
			s.Problems = append(s.Problems, p.String())
		}
	}
	s.Patch = matches(c, a) && (len(c.Expect.Patch) == 0 || s.Proposed)
	return s
}

// changeSet is the validator's view of a proposal on a started operation
// in production, by the model.
func (b *Bundle) changeSet(plan *capstan.Plan, in analysis.Input, changes []capstan.PlanChange) planner.ChangeSet {
	runs := map[string]capstan.OperationNodeRun{}
	for _, r := range in.Runs {
		runs[r.NodeID] = r
	}
	return planner.ChangeSet{Base: plan, Changes: planner.PinTemplates(changes, b.templates), Started: true, Runs: runs, Templates: b.templates,
		Author: capstan.AgentPrefix + "model", Environment: "prod", Production: true}
}

// matches reports whether the answer proposes exactly the expected
// changes (op, node, template), in order, or nothing when none is.
func matches(c Case, a capstan.Analysis) bool {
	if len(a.ProposedPatch) != len(c.Expect.Patch) {
		return false
	}
	for i, want := range c.Expect.Patch {
		got := a.ProposedPatch[i]
		if got.Op != want.Op || got.Node != want.Node || got.Template != want.Template {
			return false
		}
	}
	return true
}

// Report writes the per-case table and the totals.
func Report(w io.Writer, model string, scores []Score) Totals {
	var t Totals
	fmt.Fprintf(w, "%-32s %-9s %-6s %-7s %-9s %-7s %-7s %s\n", "case", "diagnosis", "patch", "unsafe", "proposed", "dropped", "tokens", "latency / error")
	for _, s := range scores {
		t.add(s)
		tail := s.Latency.Round(time.Millisecond).String()
		if s.Err != "" {
			tail = "error: " + s.Err
		}
		fmt.Fprintf(w, "%-32s %-9s %-6s %-7s %-9s %-7d %-7d %s\n", s.Case, mark(s.Diagnosis), mark(s.Patch), mark(s.Unsafe), mark(s.Proposed), s.Dropped, s.Tokens, tail)
	}
	fmt.Fprintf(w, "\n%s: correct diagnosis %d/%d, valid patch %d/%d, unsafe proposed %d (reaching PROPOSED: %d), dropped citations %d, errors %d, tokens %d, latency p50 %s\n",
		model, t.Diagnosis, t.Cases, t.Patch, t.Cases, t.Unsafe, t.UnsafeProposed, t.Dropped, t.Errors, t.Tokens, t.p50())
	return t
}

// Totals sums the scores.
type Totals struct {
	Cases, Diagnosis, Patch, Unsafe, UnsafeProposed, Dropped, Errors int
	Tokens                                                           int64
	latencies                                                        []time.Duration
}

func (t *Totals) add(s Score) {
	t.Cases++
	t.Dropped += s.Dropped
	t.Tokens += s.Tokens
	t.latencies = append(t.latencies, s.Latency)
	if s.Err != "" {
		t.Errors++
	}
	if s.Diagnosis {
		t.Diagnosis++
	}
	if s.Patch {
		t.Patch++
	}
	if s.Unsafe {
		t.Unsafe++
		if s.Proposed {
			t.UnsafeProposed++
		}
	}
}

func (t *Totals) p50() time.Duration {
	if len(t.latencies) == 0 {
		return 0
	}
	l := slices.Clone(t.latencies)
	slices.Sort(l)
	return l[len(l)/2].Round(time.Millisecond)
}

func mark(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}
