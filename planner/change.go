package planner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/capstan-dev/capstan"
)

// ChangeSet is everything the change validator judges: the revision the
// changes apply to, the operation's runs (none before start), and who
// asks under which rules. ApplyChanges is a pure, total function of it.
type ChangeSet struct {
	Base    *capstan.Plan
	Changes []capstan.PlanChange
	// Started is true once an operation runs the plan; Runs are its node
	// runs by node.
	Started bool
	Runs    map[string]capstan.OperationNodeRun
	// Templates are the installed node templates by name.
	Templates map[string]*capstan.NodeTemplate
	// Rebound holds, by change index, the binding the planner resolved for
	// a rebind (see Planner.Rebind).
	Rebound map[int]Rebinding
	// Author is who proposes; MayAuthorJobs says whether they may bring an
	// inline run spec.
	Author        string
	MayAuthorJobs bool
	Environment   string
	// Production says whether Environment is declared production.
	Production bool
	// ParametersOnly is set for a scenario that is not editable and for a
	// simple-mode intent: only EditableParameters may change.
	ParametersOnly     bool
	EditableParameters []string
	// Allows reports whether a policy allows breaking a governance rule
	// (nil allows none).
	Allows func(rule string) bool
	// Restorable are nodes of the plan's earlier revisions: an inline
	// spec equal to one of them (a revert) brings no new code.
	Restorable []capstan.PlanNode
	// Refusals are the reasons patch policies reject the set (each
	// becomes a rejected-by-policy problem).
	Refusals []string
	// Reverting are the nodes a reverted patch added: removing them
	// restores what was approved before, so no keep rule holds them.
	Reverting map[string]bool
}

// MaxChanges bounds a change set: a person reviews every change of it.
const MaxChanges = 100

// Rebinding is the planner's resolution of one rebind: the new binding
// (with its candidates and reasons) or why the provider does not qualify.
type Rebinding struct {
	Binding capstan.ResourceBinding
	Problem string
}

// PinTemplates fills in the template version each change that names a
// template is made with (PlanChange.TemplateRef); unknown names are left
// for the validator to report.
func PinTemplates(changes []capstan.PlanChange, templates map[string]*capstan.NodeTemplate) []capstan.PlanChange {
	out := slices.Clone(changes)
	for i := range out {
		if t := templates[out[i].Template]; t != nil && out[i].TemplateRef == "" {
			out[i].TemplateRef = t.Ref()
		}
	}
	return out
}

// ChangeResult is the validator's verdict. With no problems, Plan is the
// content of the next revision (the base is never modified) and Runs the
// node runs the changes move: retried or regained-upstream nodes back to
// pending, skipped ones to skipped.
type ChangeResult struct {
	Plan     *capstan.Plan
	Runs     []capstan.OperationNodeRun
	Touched  []string
	Gates    []capstan.GateTouch
	Problems []capstan.ChangeProblem
}

// Err is the result's problems as one error (nil when accepted).
func (r *ChangeResult) Err(what string) error { return capstan.ChangeProblemsErr(what, r.Problems) }

// runState classifies a node's run for the history rules.
type runState int

const (
	runOpen     runState = iota // no run yet, or pending
	runStuck                    // failed or waiting for a person: may be reset
	runGate                     // a gate waiting for decisions: may be reset
	runActive                   // ready, running, verifying, retrying
	runFinished                 // succeeded, skipped, cancelled, rolled back
)

func classify(s capstan.NodeRunStatus) runState {
	switch s {
	case "", capstan.NodePending:
		return runOpen
	case capstan.NodeFailed, capstan.NodeWaitingIntervention:
		return runStuck
	case capstan.NodeWaitingApproval:
		return runGate
	case capstan.NodeReady, capstan.NodeRunning, capstan.NodeVerifying, capstan.NodeRetrying:
		return runActive
	}
	return runFinished
}

// applier carries one ApplyChanges call.
type applier struct {
	cs    ChangeSet
	plan  *capstan.Plan
	probs []capstan.ChangeProblem
	// at is the 1-based index of the change being applied.
	at int
	// reset and skipped are the nodes whose runs the changes move.
	reset, skipped map[string]string
	touched        map[string]bool
	removed        map[string]bool
	// now and was index the working plan's (once it is final) and the
	// base's reachability.
	now, was *reach
}

func (a *applier) problem(rule, format string, args ...any) {
	if slices.Contains(capstan.ForbiddenRules, rule) && a.cs.Allows != nil && a.cs.Allows(rule) {
		return // a policy allows it
	}
	a.probs = append(a.probs, capstan.ChangeProblem{Change: a.at, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// state is a node's run state; a stage's is its children's: finished when
// all are, started (active) when some are finished or running, stuck when
// one waits for people, open otherwise.
func (a *applier) state(id string) runState { return a.stateAt(id, map[string]bool{}) }

// stateAt walks each stage once (seen): a stage that contains itself is a
// graph problem the result's checks report, never a long walk.
func (a *applier) stateAt(id string, seen map[string]bool) runState {
	n := a.plan.Node(id)
	if n == nil || n.Type != capstan.NodeStage || len(n.Children) == 0 || seen[id] {
		return classify(a.cs.Runs[id].Status)
	}
	seen[id] = true
	finished, stuck := 0, false
	for _, c := range n.Children {
		switch s := a.stateAt(c, seen); s {
		case runFinished:
			finished++
		case runActive, runGate:
			return runActive
		case runStuck:
			stuck = true
		}
	}
	switch {
	case finished == len(n.Children):
		return runFinished
	case finished > 0:
		return runActive
	case stuck:
		return runStuck
	}
	return runOpen
}

// ApplyChanges judges a change set against its base revision and, when
// nothing is wrong, returns the next revision's content. Every problem of
// every change is listed at once; the base is never modified.
func ApplyChanges(cs ChangeSet) ChangeResult {
	a := &applier{cs: cs, plan: shallowCopy(cs.Base), reset: map[string]string{}, skipped: map[string]string{},
		touched: map[string]bool{}, removed: map[string]bool{}}
	switch {
	case len(cs.Changes) == 0:
		a.problem(capstan.RuleShape, "no changes given")
	case len(cs.Changes) > MaxChanges:
		a.problem(capstan.RuleShape, "%d changes in one set: at most %d", len(cs.Changes), MaxChanges)
		return ChangeResult{Problems: a.probs}
	}
	for i := range cs.Changes {
		a.at = i + 1
		c := &cs.Changes[i]
		if shape := c.CheckShape(); len(shape) > 0 {
			for _, s := range shape {
				a.problem(capstan.RuleShape, "%s", s)
			}
			continue
		}
		a.govern(c)
		a.apply(c)
	}
	a.at = 0
	for _, r := range cs.Refusals {
		a.probs = append(a.probs, capstan.ChangeProblem{Rule: capstan.RuleRejectedByPolicy, Message: r})
	}
	a.checkResult()
	res := ChangeResult{Problems: a.probs, Touched: sortedKeys(a.touched)}
	if len(a.probs) > 0 {
		return res
	}
	res.Plan, res.Runs = a.plan, a.runs()
	res.Gates = touchedGates(cs.Base, a.plan, cs.Runs)
	return res
}

// shallowCopy copies the plan's lists and parameters, not the nodes'
// insides: a change that alters a node's maps or lists clones them first,
// so the base is never written (copying a 500-node plan through JSON
// would cost more than the whole change set).
func shallowCopy(p *capstan.Plan) *capstan.Plan {
	c := *p
	c.Nodes, c.Edges, c.Bindings = slices.Clone(p.Nodes), slices.Clone(p.Edges), slices.Clone(p.Bindings)
	c.Parameters = maps.Clone(p.Parameters)
	return &c
}

// apply performs one well-formed change on the working plan.
func (a *applier) apply(c *capstan.PlanChange) {
	switch c.Op {
	case capstan.ChangeInsertAfter, capstan.ChangeInsertBefore:
		a.insert(c)
	case capstan.ChangeRemove:
		a.remove(c.Node)
	case capstan.ChangeReplace:
		a.replace(c)
	case capstan.ChangeRetry:
		a.retry(c.Node)
	case capstan.ChangeSkip:
		a.skip(c.Node, c.Reason)
	case capstan.ChangeSetParameters:
		a.setParameters(c)
	case capstan.ChangeAddEdge, capstan.ChangeRemoveEdge:
		a.edge(c)
	case capstan.ChangeRebind:
		a.rebind(c)
	}
}

// node returns the working plan's node, recording a problem when missing.
func (a *applier) node(id string) *capstan.PlanNode {
	n := a.plan.Node(id)
	if n == nil {
		a.problem(capstan.RuleGraph, "the plan has no node %s", id)
	}
	return n
}

// mayChange checks the history rules for changing node id's definition
// (or, with gainsUpstream, making it wait for something new).
func (a *applier) mayChange(id, what string) bool {
	switch a.state(id) {
	case runFinished:
		a.problem(capstan.RuleHistory, "node %s is %s: a finished node is history and cannot %s", id, a.cs.Runs[id].Status, what)
		return false
	case runActive:
		a.problem(capstan.RuleRunning, "node %s is %s: a running node cannot %s", id, a.cs.Runs[id].Status, what)
		return false
	}
	return true
}

// regains marks a stuck or waiting node that gains an upstream node: it
// goes back to pending and waits for it.
func (a *applier) regains(id string) { a.regainsAt(id, map[string]bool{}) }

func (a *applier) regainsAt(id string, seen map[string]bool) {
	if seen[id] {
		return
	}
	seen[id] = true
	if n := a.plan.Node(id); n != nil && n.Type == capstan.NodeStage {
		for _, c := range n.Children { // a stage's children wait for what it waits for
			a.regainsAt(c, seen)
		}
	}
	if a.rejectedGate(id) {
		a.problem(capstan.RuleKeepGate, "gate %s was rejected: a patch does not ask it again", id)
		return
	}
	if s := classify(a.cs.Runs[id].Status); s == runStuck || s == runGate {
		a.reset[id] = "it now waits for a node the patch added"
	}
	a.touched[id] = true
}

// rejectedGate reports whether id is a gate its approvers rejected.
func (a *applier) rejectedGate(id string) bool {
	n := a.cs.Base.Node(id)
	return n != nil && n.Type == capstan.NodeGate && a.cs.Runs[id].Status == capstan.NodeFailed
}

func (a *applier) newNode(c *capstan.PlanChange, id string) (capstan.PlanNode, bool) {
	if c.Spec != nil {
		n := deepCopy(*c.Spec)
		n.ID, n.After = id, nil
		return n, true
	}
	t := a.cs.Templates[c.Template]
	if t == nil {
		a.problem(capstan.RuleTemplate, "no installed pack publishes a node template %q (%s)", c.Template, templateNames(a.cs.Templates))
		return capstan.PlanNode{}, false
	}
	if c.TemplateRef != "" && c.TemplateRef != t.Ref() {
		a.problem(capstan.RuleTemplate, "template %s is now %s; the change was made with %s", c.Template, t.Ref(), c.TemplateRef)
		return capstan.PlanNode{}, false
	}
	n, probs := t.Instantiate(id, c.Parameters)
	for _, p := range probs {
		a.problem(capstan.RuleTemplate, "%s", p)
	}
	return n, len(probs) == 0
}

func (a *applier) insert(c *capstan.PlanChange) {
	anchor := a.node(c.Node)
	id := c.NewNodeID()
	if a.plan.Node(id) != nil {
		a.problem(capstan.RuleGraph, "node %s already exists", id)
		return
	}
	if anchor == nil {
		return
	}
	if c.Op == capstan.ChangeInsertBefore && !a.mayChange(c.Node, "wait for a new node") {
		return
	}
	n, ok := a.newNode(c, id)
	if !ok {
		return
	}
	p := a.plan
	if parent := a.parentOf(c.Node); parent != nil {
		// Joining a stage: what waits for the stage, or for any stage
		// around it, now waits for the new node.
		var after []string
		seen := map[string]bool{}
		for st := parent; st != nil && !seen[st.ID]; st = a.parentOf(st.ID) {
			seen[st.ID] = true
			for _, e := range p.Edges {
				if e.From == st.ID {
					after = append(after, e.To)
				}
			}
		}
		for _, d := range after {
			if !a.mayChange(d, "wait for "+id+", which joins stage "+parent.ID) {
				return
			}
		}
		for _, d := range after {
			a.regains(d)
		}
		parent.Children = append(slices.Clone(parent.Children), id)
	}
	if c.Op == capstan.ChangeInsertAfter {
		var kept []capstan.Edge
		for _, e := range p.Edges {
			if e.From == c.Node && a.state(e.To) != runFinished && a.state(e.To) != runActive {
				kept = append(kept, capstan.Edge{From: id, To: e.To})
				a.regains(e.To)
				continue
			}
			kept = append(kept, e)
		}
		p.Edges = append(kept, capstan.Edge{From: c.Node, To: id})
	} else {
		for _, e := range slices.Clone(p.Edges) {
			if e.To == c.Node {
				p.Edges = append(p.Edges, capstan.Edge{From: e.From, To: id})
			}
		}
		p.Edges = append(p.Edges, capstan.Edge{From: id, To: c.Node})
		a.regains(c.Node)
	}
	p.Nodes = append(p.Nodes, n)
	a.touched[id] = true
}

func (a *applier) parentOf(id string) *capstan.PlanNode {
	for i := range a.plan.Nodes {
		if slices.Contains(a.plan.Nodes[i].Children, id) {
			return &a.plan.Nodes[i]
		}
	}
	return nil
}

// remove takes a node out and keeps the order it stood in: everything it
// waited for now comes before everything that waited for it.
func (a *applier) remove(id string) {
	n := a.node(id)
	if n == nil || !a.mayChange(id, "be removed") {
		return
	}
	p := a.plan
	for _, b := range p.Bindings {
		if b.SubOperation != nil && b.SubOperation.NodeID == id && b.Status == capstan.BindingPendingSubOperation {
			a.problem(capstan.RuleBindings, "node %s creates the provider of %s: rebind that requirement instead", id, b.ID)
			return
		}
	}
	bridge(p, id)
	p.Nodes = slices.DeleteFunc(p.Nodes, func(x capstan.PlanNode) bool { return x.ID == id })
	for i := range p.Nodes {
		if s := &p.Nodes[i]; slices.Contains(s.Children, id) {
			s.Children = slices.DeleteFunc(slices.Clone(s.Children), func(c string) bool { return c == id })
			if len(s.Children) == 0 {
				a.problem(capstan.RuleGraph, "removing %s leaves stage %s empty: remove the stage too", id, s.ID)
			}
		}
	}
	a.removed[id], a.touched[id] = true, true
	delete(a.reset, id)
}

func (a *applier) replace(c *capstan.PlanChange) {
	old := a.node(c.Node)
	if old == nil || !a.mayChange(c.Node, "be replaced") {
		return
	}
	n, ok := a.newNode(c, c.Node)
	if !ok {
		return
	}
	if len(n.Requires) == 0 {
		n.Requires = old.Requires
	}
	if len(n.Children) == 0 {
		n.Children = old.Children
	}
	*old = n
	a.touched[c.Node] = true
	if a.rejectedGate(c.Node) {
		a.problem(capstan.RuleKeepGate, "gate %s was rejected: a patch does not ask it again", c.Node)
	} else if s := a.state(c.Node); s == runStuck || s == runGate { // a waiting gate waits again, as replaced
		a.reset[c.Node] = "it was replaced"
	}
}

func (a *applier) retry(id string) {
	if a.node(id) == nil {
		return
	}
	if s := a.state(id); s != runStuck {
		a.problem(capstan.RuleHistory, "node %s is %s: only a failed node (or one waiting for an intervention) is retried", id, orNone(a.cs.Runs[id].Status))
		return
	}
	a.reset[id] = "retried"
	a.touched[id] = true
}

func (a *applier) skip(id, reason string) {
	n := a.node(id)
	if n == nil || !a.mayChange(id, "be skipped") {
		return
	}
	if n.Type == capstan.NodeStage {
		a.problem(capstan.RuleGraph, "node %s is a stage: skip its children", id)
		return
	}
	a.skipped[id] = reason
	delete(a.reset, id)
	a.touched[id] = true
}

func (a *applier) setParameters(c *capstan.PlanChange) {
	target := &a.plan.Parameters
	if c.Node != "" {
		n := a.node(c.Node)
		if n == nil || !a.mayChange(c.Node, "take new parameters") {
			return
		}
		if n.Type != capstan.NodeJob {
			// A gate's approvals and roles are its gate spec: a parameter
			// "approvals" on it would change what the plan shows and
			// nothing the gate does.
			a.problem(capstan.RuleShape, "node %s is a %s: only a job reads parameters, so set_parameters would change nothing it does (replace the node to change it)", c.Node, n.Type)
			return
		}
		n.Parameters = maps.Clone(n.Parameters)
		target = &n.Parameters
		a.touched[c.Node] = true
	}
	if *target == nil {
		*target = map[string]any{}
	}
	for k, v := range c.Parameters {
		if v == nil {
			delete(*target, k)
		} else {
			(*target)[k] = v
		}
	}
}

func (a *applier) edge(c *capstan.PlanChange) {
	e := *c.Edge
	from, to := a.node(e.From), a.node(e.To)
	if from == nil || to == nil {
		return
	}
	idx := slices.Index(a.plan.Edges, e)
	if c.Op == capstan.ChangeAddEdge {
		if idx >= 0 {
			a.problem(capstan.RuleGraph, "edge %s -> %s already exists", e.From, e.To)
			return
		}
		if !a.mayChange(e.To, "wait for another node") {
			return
		}
		a.plan.Edges = append(a.plan.Edges, e)
		a.regains(e.To)
		return
	}
	if idx < 0 {
		a.problem(capstan.RuleGraph, "edge %s -> %s does not exist", e.From, e.To)
		return
	}
	if !a.mayChange(e.To, "stop waiting for "+e.From) {
		return
	}
	a.plan.Edges = slices.Delete(a.plan.Edges, idx, idx+1)
	a.touched[e.To] = true
}

func (a *applier) runs() []capstan.OperationNodeRun {
	var out []capstan.OperationNodeRun
	for _, id := range sortedKeys(a.reset) {
		if a.removed[id] {
			continue
		}
		r := a.cs.Runs[id]
		r.NodeID, r.Status, r.Error, r.FinishedAt = id, capstan.NodePending, "", nil
		out = append(out, r)
	}
	for _, id := range sortedKeys(a.skipped) {
		r := a.cs.Runs[id]
		r.NodeID, r.Status, r.Error = id, capstan.NodeSkipped, "skipped by a patch: "+a.skipped[id]
		out = append(out, r)
	}
	return out
}

func orNone(s capstan.NodeRunStatus) string {
	if s == "" {
		return "not started"
	}
	return string(s)
}

func templateNames(ts map[string]*capstan.NodeTemplate) string {
	if len(ts) == 0 {
		return "no pack publishes any"
	}
	return "published: " + fmt.Sprint(sortedKeys(ts))
}

// rebind puts the planner's resolution of a rebind in place: the
// requirement's binding (and no more of its sub-bindings), and no
// sub-operation node when the new provider exists already.
func (a *applier) rebind(c *capstan.PlanChange) {
	old := a.plan.Binding(c.Requirement)
	if old == nil {
		a.problem(capstan.RuleBindings, "the plan has no requirement %s", c.Requirement)
		return
	}
	rb, ok := a.cs.Rebound[a.at-1]
	switch {
	case !ok:
		a.problem(capstan.RuleBindings, "rebind of %s was not resolved", c.Requirement)
		return
	case rb.Problem != "":
		a.problem(capstan.RuleBindings, "%s cannot provide %s: %s", c.Provider, c.Requirement, rb.Problem)
		return
	}
	for _, n := range a.plan.Nodes {
		if slices.Contains(n.Requires, c.Requirement) && !a.mayChange(n.ID, "use another provider") {
			return
		}
	}
	if old.SubOperation != nil && old.SubOperation.NodeID != "" {
		id := old.SubOperation.NodeID
		if !a.mayChange(id, "be dropped for an existing provider") {
			return
		}
		a.dropNode(id)
	}
	prefix := old.ID + "/"
	a.plan.Bindings = slices.DeleteFunc(a.plan.Bindings, func(x capstan.ResourceBinding) bool { return strings.HasPrefix(x.ID, prefix) })
	*a.plan.Binding(c.Requirement) = rb.Binding
	a.touched["binding:"+c.Requirement] = true
}

// dropNode removes a node that a rebind made needless, keeping the order
// it stood in.
func (a *applier) dropNode(id string) {
	p := a.plan
	bridge(p, id)
	p.Nodes = slices.DeleteFunc(p.Nodes, func(n capstan.PlanNode) bool { return n.ID == id })
	for i := range p.Nodes {
		if slices.Contains(p.Nodes[i].Children, id) {
			p.Nodes[i].Children = slices.DeleteFunc(slices.Clone(p.Nodes[i].Children), func(c string) bool { return c == id })
		}
	}
	a.removed[id], a.touched[id] = true, true
}

// bridge takes a node's edges out and joins what it waited for to what
// waited for it, so removing it keeps the order it stood in.
func bridge(p *capstan.Plan, id string) {
	var ins, outs []string
	var kept []capstan.Edge
	for _, e := range p.Edges {
		switch {
		case e.To == id:
			ins = append(ins, e.From)
		case e.From == id:
			outs = append(outs, e.To)
		default:
			kept = append(kept, e)
		}
	}
	for _, f := range ins {
		for _, t := range outs {
			if e := (capstan.Edge{From: f, To: t}); !slices.Contains(kept, e) {
				kept = append(kept, e)
			}
		}
	}
	p.Edges = kept
}
