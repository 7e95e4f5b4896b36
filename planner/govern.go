package planner

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/dag"
	"github.com/capstan-dev/capstan/playbook"
)

// govern checks one change against the governance rules (SPEC §10) that
// can be judged from the change itself: what mode the plan takes changes
// in, who may bring code, and what may not be removed, replaced or
// skipped. Rules on the resulting graph are checked in checkResult.
func (a *applier) govern(c *capstan.PlanChange) {
	cs := a.cs
	if capstan.RunChange(c.Op) && !cs.Started {
		a.problem(capstan.RuleRunChangeBefore, "%s acts on a running operation; before start, remove the node or edit its parameters", c.Op)
	}
	if cs.ParametersOnly {
		switch c.Op {
		case capstan.ChangeSetParameters:
			for k := range c.Parameters {
				if !slices.Contains(cs.EditableParameters, k) {
					a.problem(capstan.RuleParametersOnly, "parameter %s is not one the scenario declares editable (%s)", k, orList(cs.EditableParameters))
				}
			}
		case capstan.ChangeRetry:
		default:
			a.problem(capstan.RuleParametersOnly, "this plan takes parameter changes only (its scenario is not editable or its intent is in simple mode): %s is refused", c.Op)
		}
	}
	if c.Spec != nil && runsCode(c.Spec) && !restorable(cs.Restorable, c.Spec) {
		switch {
		case !cs.MayAuthorJobs:
			a.problem(capstan.RuleInlineCode, "an inline node that runs a script, a command or a URL needs the job-authoring permission (admin, platform_admin); insert a pack's node template instead")
		case cs.Production:
			a.problem(capstan.RuleInlineCodeProd, "an inline node that runs code in production needs a policy that allows it")
		}
	}
	old := cs.Base.Node(c.Node)
	if old == nil {
		return
	}
	switch c.Op {
	case capstan.ChangeRetry:
		if old.Type == capstan.NodeGate {
			a.problem(capstan.RuleKeepGate, "gate %s is not asked again by a retry: its decisions stand", old.ID)
		}
	case capstan.ChangeRemove, capstan.ChangeSkip:
		if !(c.Op == capstan.ChangeRemove && cs.Reverting[c.Node]) {
			a.keepKind(old, c.Op, nil)
		}
	case capstan.ChangeReplace:
		var n *capstan.PlanNode
		if c.Spec != nil {
			n = c.Spec
		} else if t := cs.Templates[c.Template]; t != nil {
			n = &t.Node
		}
		if n != nil {
			a.keepKind(old, c.Op, n)
		}
	}
}

// keepKind refuses removing, skipping or replacing (by n) what guards a
// plan: a gate, verification and evidence probes, a sub-operation.
func (a *applier) keepKind(old *capstan.PlanNode, op string, n *capstan.PlanNode) {
	switch old.Type {
	case capstan.NodeGate:
		switch {
		case n == nil || n.Type != capstan.NodeGate || n.Gate == nil:
			a.problem(capstan.RuleKeepGate, "gate %s may not be %s unless a policy allows it", old.ID, pastTense(op))
		case weakerGate(*old.Gate, *n.Gate):
			a.problem(capstan.RuleKeepGateRoles, "the replacement of gate %s lowers its roles, quorum or timeout outcome (was %v x%d, %s)",
				old.ID, old.Gate.RequiredRoles, max(old.Gate.Approvals, 1), orDefault(old.Gate.OnTimeout, "reject on timeout"))
		}
	case capstan.NodeSubOperation:
		if op != capstan.ChangeRemove { // removal is refused by the bindings rule, with its remedy
			a.problem(capstan.RuleKeepSubOp, "sub-operation %s may not be %s: rebind its requirement instead", old.ID, pastTense(op))
		}
	}
	if lost := lostProbes(old, n); len(lost) > 0 {
		a.problem(capstan.RuleKeepEvidence, "%s %s would lose its evidence or verification probes %v unless a policy allows it", old.Type, old.ID, lost)
	}
}

// weakerGate reports whether g lets more people (roles not in was), fewer
// approvals, or a timeout that approves through.
func weakerGate(was, g capstan.GateSpec) bool {
	for _, r := range g.RequiredRoles {
		if !slices.Contains(was.RequiredRoles, r) {
			return true
		}
	}
	if max(g.Approvals, 1) < max(was.Approvals, 1) {
		return true
	}
	return g.OnTimeout == "approve" && was.OnTimeout != "approve"
}

// lostProbes names the probes of old that n (nil: none) does not keep
// unchanged among the probes that prove it done (PlanNode.RunProbes: a
// node's settings belong to its type, so those are the ones that run).
func lostProbes(old, n *capstan.PlanNode) []string {
	var keep []capstan.Probe
	if n != nil {
		keep = n.RunProbes()
	}
	var lost []string
	for _, p := range old.RunProbes() {
		if !slices.ContainsFunc(keep, func(k capstan.Probe) bool { return reflect.DeepEqual(k, p) }) {
			lost = append(lost, p.Name)
		}
	}
	return lost
}

// runsCode reports whether a node written inline would run something on
// the server's hosts, its network or a target host: anything but the
// simulator and the probes that only read Capstan's own records
// (fail-closed: a runner or probe type added later counts as code).
func runsCode(n *capstan.PlanNode) bool {
	if n.Job != nil {
		if r := n.Job.Run; r.Runner != "sim" || r.Script != "" || r.URL != "" || r.Target != "" {
			return true
		}
		if c := n.Job.Controls.Rollback.Compensation; c != nil && c.Runner != "sim" {
			return true
		}
	}
	for _, p := range n.AllProbes() {
		switch {
		case p.Script != "" || p.URL != "" || p.Target != "":
			return true
		case p.Type == "sim" || p.Type == "resource_state" || p.Type == "capability":
		default:
			return true
		}
	}
	return false
}

func pastTense(op string) string {
	switch op {
	case capstan.ChangeRemove:
		return "removed"
	case capstan.ChangeSkip:
		return "skipped"
	case capstan.ChangeReplace:
		return "replaced"
	}
	return op
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return "on timeout " + s
}

func orList(s []string) string {
	if len(s) == 0 {
		return "it declares none"
	}
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

// checkResult judges the resulting plan as a whole: no new graph, contract
// or binding problem; every gate still guards what it guarded and every
// verification still follows what it verified; a skipped node's
// dependents do not need what it would have made.
func (a *applier) checkResult() {
	// An invalid plan lists its problems; changes may leave those, not add.
	before := map[string]bool{}
	for _, p := range a.cs.Base.Problems {
		before[p] = true
	}
	for _, p := range bindingProblems(a.plan) {
		if !before[p] {
			a.problem(capstan.RuleBindings, "%s", p)
		}
	}
	for _, p := range graphProblems(a.plan, a.reach()) {
		if !before[p] {
			a.problem(capstan.RuleGraph, "%s", p)
		}
	}
	if len(a.probs) > 0 {
		return // reachability needs a well-formed graph
	}
	a.checkOrder()
	a.checkSkipped()
	a.checkContracts()
}

// checkContracts refuses a result in which a node that still runs needs
// an artifact no node before it makes (a plan that already had such a
// problem keeps it).
func (a *applier) checkContracts() {
	after := contractProblems(a.plan, a.reach())
	if len(after) == 0 {
		return
	}
	before := contractProblems(a.cs.Base, a.baseReach())
	for _, p := range after {
		if !slices.Contains(before, p) {
			a.problem(capstan.RuleContract, "%s", p)
		}
	}
}

// baseReach indexes the base revision's reachability once.
func (a *applier) baseReach() *reach {
	if a.was == nil {
		a.was = newReach(a.cs.Base)
	}
	return a.was
}

func contractProblems(p *capstan.Plan, r *reach) []string {
	makers := map[string][]string{}
	for _, n := range p.Nodes {
		if n.Job != nil {
			for _, art := range n.Job.Outputs.Artifacts {
				makers[art.Name] = append(makers[art.Name], n.ID)
			}
		}
	}
	var out []string
	for _, n := range p.Nodes {
		needs := consumes(&n)
		if n.Job != nil {
			needs = n.Job.Inputs.Artifacts // capabilities come from bindings too
		}
		if len(needs) == 0 {
			continue
		}
		up := r.from(n.ID, false)
		for _, art := range needs {
			if !slices.ContainsFunc(makers[art], func(m string) bool { return up[m] }) {
				out = append(out, fmt.Sprintf("node %s needs artifact %s, which no node before it makes", n.ID, art))
			}
		}
	}
	return out
}

// reach indexes the working plan once for the checks that walk it.
func (a *applier) reach() *reach {
	if a.now == nil {
		a.now = newReach(a.plan)
	}
	return a.now
}

// graphProblems is GraphProblems with the acyclicity check of the dag
// package (which explains a cycle) run only when a cheap walk finds one:
// a 500-node plan is checked in a fraction of the time.
func graphProblems(p *capstan.Plan, r *reach) []string {
	var probs capstan.Problems
	reqs := map[string]bool{}
	for _, b := range p.Bindings {
		reqs[b.ID] = true
	}
	capstan.ValidateGraph(p.Nodes, p.Edges, reqs, &probs)
	probs = append(probs, playbook.ProblemsOf(p.Nodes)...)
	if r.cyclic(p) {
		probs = append(probs, dag.Check(p.Nodes, p.Edges)...)
	}
	return probs
}

func bindingProblems(p *capstan.Plan) []string {
	var out []string
	for _, b := range p.Bindings {
		if b.Status == capstan.BindingFailed || b.Status == capstan.BindingUnresolved {
			out = append(out, fmt.Sprintf("requirement %s: %s", b.ID, b.Reason))
		}
	}
	for _, n := range p.Nodes {
		if n.SubOperation != nil && !strings.Contains(n.SubOperation.Scenario, "@") {
			out = append(out, fmt.Sprintf("node %s: sub-operation scenario %s is not installed", n.ID, n.SubOperation.Scenario))
		}
	}
	return out
}

// checkOrder refuses a result in which a gate no longer comes before a
// node it came before, or a verification no longer after a node it came
// after: an edge removed around a gate would let work bypass it.
func (a *applier) checkOrder() {
	was, now := a.baseReach(), a.reach()
	for _, n := range a.cs.Base.Nodes {
		if a.removed[n.ID] {
			continue
		}
		switch n.Type {
		case capstan.NodeGate:
			if lost := missing(was.from(n.ID, true), now.from(n.ID, true), a.removed); len(lost) > 0 {
				a.problem(capstan.RuleKeepGate, "gate %s would no longer come before %v", n.ID, lost)
			}
		case capstan.NodeVerification:
			if lost := missing(was.from(n.ID, false), now.from(n.ID, false), a.removed); len(lost) > 0 {
				a.problem(capstan.RuleKeepEvidence, "verification %s would no longer come after %v", n.ID, lost)
			}
		}
	}
}

func missing(was, now map[string]bool, removed map[string]bool) []string {
	var out []string
	for id := range was {
		if !now[id] && !removed[id] {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// reach answers which nodes come after (or before) a node, through edges
// and the stages that contain them.
type reach struct {
	down, up map[string][]string
}

func newReach(p *capstan.Plan) *reach {
	members := map[string][]string{}
	var expand func(id string) []string
	byID := map[string]*capstan.PlanNode{}
	for i := range p.Nodes {
		byID[p.Nodes[i].ID] = &p.Nodes[i]
	}
	expanding := map[string]bool{}
	expand = func(id string) []string {
		if m, ok := members[id]; ok {
			return m
		}
		out := []string{id}
		if expanding[id] { // a stage that contains itself: ValidateGraph reports it
			return out
		}
		expanding[id] = true
		if n := byID[id]; n != nil {
			for _, c := range n.Children {
				out = append(out, expand(c)...)
			}
		}
		expanding[id] = false
		members[id] = out
		return out
	}
	r := &reach{down: map[string][]string{}, up: map[string][]string{}}
	for _, e := range p.Edges {
		for _, f := range expand(e.From) {
			for _, t := range expand(e.To) {
				r.down[f] = append(r.down[f], t)
				r.up[t] = append(r.up[t], f)
			}
		}
	}
	return r
}

// cyclic reports whether the expanded graph has a cycle (Kahn's walk).
func (r *reach) cyclic(p *capstan.Plan) bool {
	indeg := map[string]int{}
	for _, n := range p.Nodes {
		indeg[n.ID] += 0
	}
	for _, tos := range r.down {
		for _, t := range tos {
			indeg[t]++
		}
	}
	var queue []string
	for id, d := range indeg {
		if d == 0 {
			queue = append(queue, id)
		}
	}
	seen := 0
	for len(queue) > 0 {
		n := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		seen++
		for _, t := range r.down[n] {
			if indeg[t]--; indeg[t] == 0 {
				queue = append(queue, t)
			}
		}
	}
	return seen < len(indeg)
}

// from returns every node reachable from id, downstream or upstream.
func (r *reach) from(id string, downstream bool) map[string]bool {
	adj := r.up
	if downstream {
		adj = r.down
	}
	seen := map[string]bool{}
	stack := []string{id}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, m := range adj[n] {
			if !seen[m] {
				seen[m] = true
				stack = append(stack, m)
			}
		}
	}
	delete(seen, id)
	return seen
}

// checkSkipped refuses skipping a node whose artifacts or capabilities a
// node that still runs consumes.
func (a *applier) checkSkipped() {
	for _, id := range sortedKeys(a.skipped) {
		s := a.plan.Node(id)
		if s == nil {
			continue
		}
		var makes []string
		if s.Job != nil {
			for _, art := range s.Job.Outputs.Artifacts {
				makes = append(makes, art.Name)
			}
			makes = append(makes, s.Job.Outputs.Capabilities...)
		}
		makes = append(makes, s.Produces...)
		for _, n := range a.plan.Nodes {
			if n.ID == id || a.skipped[n.ID] != "" || a.state(n.ID) == runFinished {
				continue
			}
			for _, need := range consumes(&n) {
				if slices.Contains(makes, need) {
					a.problem(capstan.RuleSkipDependents, "node %s needs %s, which skipped node %s would not make: skip or change %s too", n.ID, need, id, n.ID)
				}
			}
		}
	}
}

func consumes(n *capstan.PlanNode) []string {
	var out []string
	if n.Job != nil {
		out = append(out, n.Job.Inputs.Artifacts...)
		out = append(out, n.Job.Inputs.Capabilities...)
	}
	if n.Analysis != nil {
		out = append(out, n.Analysis.Inputs...)
	}
	return out
}

// touchedGates lists the gates not yet decided whose upstream digest the
// change set moves (or that it removes or replaces under a policy): their
// approvers must approve the patch.
func touchedGates(base, out *capstan.Plan, runs map[string]capstan.OperationNodeRun) []capstan.GateTouch {
	var gates []capstan.GateTouch
	for _, g := range base.Nodes {
		if g.Type != capstan.NodeGate || g.Gate == nil || classify(runs[g.ID].Status) == runFinished {
			continue
		}
		n := out.Node(g.ID)
		if n == nil || n.Type != capstan.NodeGate || capstan.UpstreamDigest(base, g.ID) != capstan.UpstreamDigest(out, g.ID) {
			gates = append(gates, capstan.GateTouch{Node: g.ID, Spec: *g.Gate})
		}
	}
	return gates
}

// restorable reports whether spec is a node of an earlier revision (the
// id aside: a revert may restore it under the id it had).
func restorable(nodes []capstan.PlanNode, spec *capstan.PlanNode) bool {
	for i := range nodes {
		n := nodes[i]
		n.ID = spec.ID
		if reflect.DeepEqual(&n, spec) {
			return true
		}
	}
	return false
}
