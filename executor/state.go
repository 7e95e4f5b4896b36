package executor

import (
	"slices"

	"github.com/capstan-dev/capstan"
)

// state is one consistent read of the operation, kept up to date by the
// loop as it commits. Besides the runs it keeps what the next step needs,
// so a step costs what changed, not the size of the plan: the runs that
// are not finished (open), how many nodes are done, and the nodes a change
// may have made ready (frontier).
type state struct {
	// commands are the commands the read found pending (command.go).
	commands []capstan.Command
	op       *capstan.Operation
	plan     *capstan.Plan
	idx      *planIndex
	runs     map[string]capstan.OperationNodeRun
	open     map[string]bool
	done     int
	frontier map[string]bool
	// touched holds the unfinished runs changed since the last step took
	// them (all of them after a fresh read): the only ones it looks at.
	touched map[string]bool
	// waitingRuns counts runs waiting for a person; childRuns the
	// sub_operation runs following a child operation.
	waitingRuns, childRuns int
	// decided holds the gate records with decisions as last read: a gate
	// a patch opened again keeps them (dismissed) as its history.
	decided map[string]capstan.Gate
	// intervened holds each node's latest recorded intervention as last
	// read: a verification that follows one is not a restart's.
	intervened map[string]capstan.Intervention
}

func newState(op *capstan.Operation, plan *capstan.Plan, runs []capstan.OperationNodeRun, idx *planIndex) *state {
	st := &state{op: op, plan: plan, idx: idx, runs: map[string]capstan.OperationNodeRun{}, open: map[string]bool{},
		frontier: map[string]bool{}, touched: map[string]bool{}, decided: map[string]capstan.Gate{}, intervened: map[string]capstan.Intervention{}}
	for _, r := range runs {
		st.set(r)
	}
	for id, n := range idx.nodes { // a fresh read: any node may be ready
		if n.Type != capstan.NodeStage {
			st.frontier[id] = true
		}
	}
	return st
}

// set records a node run's new state.
func (st *state) set(r capstan.OperationNodeRun) {
	old := st.runs[r.NodeID]
	was := old.Status
	st.count(old, -1)
	st.count(r, +1)
	st.runs[r.NodeID] = r
	switch r.Status {
	case capstan.NodeSucceeded, capstan.NodeSkipped, capstan.NodeCancelled, capstan.NodeRolledBack:
		delete(st.open, r.NodeID)
		delete(st.touched, r.NodeID)
	default:
		st.open[r.NodeID] = true
		st.touched[r.NodeID] = true
	}
	switch {
	case !done(was) && done(r.Status):
		st.done++
		for _, id := range st.idx.affected(r.NodeID) {
			st.frontier[id] = true
		}
	case done(was) && !done(r.Status):
		st.done--
	}
}

// count adds (or with -1 removes) a run to the waiting and child counts.
func (st *state) count(r capstan.OperationNodeRun, by int) {
	switch r.Status {
	case capstan.NodeWaitingApproval, capstan.NodeWaitingIntervention, capstan.NodeFailed:
		st.waitingRuns += by
	case capstan.NodeRunning:
		if r.ChildOperationID != "" {
			st.childRuns += by
		}
	}
}

// takeTouched returns the unfinished runs changed since the last call.
func (st *state) takeTouched() []string {
	ids := make([]string, 0, len(st.touched))
	for id := range st.touched {
		ids = append(ids, id)
	}
	clear(st.touched)
	return st.idx.inOrder(ids)
}

// status is a node's run status ("" before it has a run).
func (st *state) status(id string) capstan.NodeRunStatus { return st.runs[id].Status }

// node returns a plan node by id.
func (st *state) node(id string) *capstan.PlanNode { return st.idx.nodes[id] }

// ready takes the frontier: the nodes that may start now, in plan order.
func (st *state) ready() []string {
	var out []string
	for id := range st.frontier {
		if st.idx.ready(id, st.status) {
			out = append(out, id)
		}
	}
	clear(st.frontier)
	return st.idx.inOrder(out)
}

// outcome is the operation's final status once every node is done, else "".
func (st *state) outcome() capstan.OperationStatus {
	if st.done == st.idx.leaves {
		return capstan.OperationSucceeded
	}
	return ""
}

// waiting reports whether some node waits for a person (approval,
// intervention, or attention after its last attempt) or for a child
// operation.
func (st *state) waiting() bool {
	return st.waitingRuns > 0 || st.childRuns > 0
}

// made lists the capabilities the operation's succeeded nodes made (their
// jobs' output capabilities and what they produce).
func (st *state) made() []string {
	var out []string
	for id, r := range st.runs {
		if r.Status != capstan.NodeSucceeded {
			continue
		}
		if n := st.node(id); n != nil {
			out = append(out, n.Produces...)
			if n.Job != nil {
				out = append(out, n.Job.Outputs.Capabilities...)
			}
		}
	}
	return out
}

func hasCapabilityProbe(n *capstan.PlanNode) bool {
	return slices.ContainsFunc(n.AllProbes(), func(p capstan.Probe) bool { return p.Type == "capability" })
}
