package executor

import (
	"github.com/capstan-dev/capstan"
)

// state is one consistent read of the operation, kept up to date by the
// loop as it commits. Besides the runs it keeps what the next step needs,
// so a step costs what changed, not the size of the plan: the runs that
// are not finished (open), how many nodes are done, and the nodes a change
// may have made ready (frontier).
type state struct {
	op       *capstan.Operation
	plan     *capstan.Plan
	idx      *planIndex
	runs     map[string]capstan.OperationNodeRun
	open     map[string]bool
	done     int
	frontier map[string]bool
}

func newState(op *capstan.Operation, plan *capstan.Plan, runs []capstan.OperationNodeRun, idx *planIndex) *state {
	st := &state{op: op, plan: plan, idx: idx, runs: map[string]capstan.OperationNodeRun{}, open: map[string]bool{}, frontier: map[string]bool{}}
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
	was := st.runs[r.NodeID].Status
	st.runs[r.NodeID] = r
	switch r.Status {
	case capstan.NodeSucceeded, capstan.NodeSkipped, capstan.NodeCancelled, capstan.NodeRolledBack:
		delete(st.open, r.NodeID)
	default:
		st.open[r.NodeID] = true
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
// intervention, or attention after its last attempt).
func (st *state) waiting() bool {
	for id := range st.open {
		switch st.runs[id].Status {
		case capstan.NodeWaitingApproval, capstan.NodeWaitingIntervention, capstan.NodeFailed:
			return true
		}
	}
	return false
}
