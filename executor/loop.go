package executor

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/shard"
)

// loop owns one operation: it reloads the persisted state, decides, persists
// the decision with its events, and only then acts (dispatches work).
type loop struct {
	e *Executor
	// desired caches the desired state the operation's attempts work
	// towards (desiredFor); workers read it, hence the lock.
	desired struct {
		mu    sync.Mutex
		read  bool
		state map[string]any
	}
	// jobs is the context of this operation's jobs; cancelling the
	// operation cancels it and kills their process groups.
	jobs     context.Context
	stopJobs context.CancelFunc
	// life ends when run returns: the operation's timers (gate
	// timeouts, retry backoffs) wait on it, so none outlives the loop.
	life      context.Context
	org, opID string
	// shard is the operation's shard; drain is closed when the shard is
	// handed to another executor, and draining is set once the loop saw
	// it: it starts nothing new and ends once no work of its is out.
	shard int
	drain <-chan struct{}
	// window is the shard's: no work starts once it closed (window.go).
	window *shard.Window
	// fence is the shard's grant every step carries (nil without a
	// Lease).
	fence *capstan.Fence
	// restored is set once the operation's outputs hold what its jobs
	// kept so far (restoreOutputs), on the loop's first read.
	restored bool
	// recheck is set when the operation's proposals are to be judged
	// again at the loop's next turn (assist.go).
	recheck bool
	// commandTries counts the failed decisions of a command (command.go).
	commandTries map[string]int
	draining     bool
	wake         chan struct{}
	// note is why it was woken; readUpTo the last sequence its state
	// includes (wake.go).
	note      wakeNote
	readUpTo  int64
	results   chan nodeResult
	due       chan string
	inflight  map[string]bool
	scheduled map[string]bool
	// cached is the operation's state as this goroutine last committed or
	// read it; dirty means someone else may have changed it since.
	cached *state
	dirty  bool
	// queue holds dispatched work not yet taken by a worker; the loop
	// hands it over in its select, so it never blocks on a busy pool
	// while workers wait to report to it.
	queue []queued
	// busy counts work handed to workers and not yet reported (at most
	// the executor's PerOperation).
	busy int
	// pending holds recorded results not committed yet: the next step
	// commits them together with its own decisions.
	pending *capstan.OperationChange
	// dirs creates the sandbox and outputs directories once; diag keeps
	// the operation's job outputs.
	dirs sync.Once
	diag *diagnosticsLog
	// idx indexes the plan (idxPlan at idxRevision) for the steps.
	idx         *planIndex
	idxPlan     string
	idxRevision int
	// gatherIdle and gatherMax bound how long results wait for the
	// group commit (gather.go).
	gatherIdle, gatherMax time.Duration
	// conflicts counts the steps that failed with a conflict in a row.
	conflicts int
	// started is the plan as the operation's start stored it, until the
	// first read takes it (Launch).
	started *capstan.Plan
	// held is the work the window refused, started again once it moves.
	held []queued
	// assist holds the nodes whose failure the next commit records and
	// that are then analyzed by themselves (assist.go); assists waits for
	// those analyses.
	assist  []assistance
	assists sync.WaitGroup
}

// maxConflicts is how many conflicts in a row the loop takes as other
// writers' changes before it backs off.
const maxConflicts = 3

type queued struct {
	node string
	task func()
}

// attemptKind says what a worker does for a node.
type attemptKind int

const (
	// kindRun runs the job (if any) and then its evidence probes.
	kindRun attemptKind = iota
	// kindProbes only re-runs the evidence probes: after a restart
	// interrupted the node, or after a recorded intervention.
	kindProbes
	// kindCompensate runs the job's compensation and its rollback evidence.
	kindCompensate
)

// nodeResult is what a worker reports for a job or verification attempt.
type nodeResult struct {
	node     string
	attempt  int
	kind     attemptKind
	res      job.Result
	evidence []capstan.Evidence
	// artifacts are the job's declared outputs and its diagnostics (refs only).
	artifacts []capstan.Artifact
	// secrets are the values of the secret artifacts the job wrote, to
	// redact from its output and its probes' (never stored).
	secrets [][]byte
	// trusted are the host keys its job trusted on first use.
	trusted []trusted
	// refused means the shard's window closed before the next piece of
	// the attempt (its job, or its probe number probed) could start
	// (window.go): nothing of it is recorded yet, and again starts it
	// once a renewal moves the window, from where it stopped.
	refused bool
	ran     bool // its job ran
	probed  int
	again   queued
}

func newLoop(e *Executor, org, opID string) *loop {
	return &loop{e: e, org: org, opID: opID, wake: make(chan struct{}, 1), commandTries: map[string]int{}, results: make(chan nodeResult, e.cfg.PerOperation),
		due: make(chan string), inflight: map[string]bool{}, scheduled: map[string]bool{}, gatherIdle: gatherIdle, gatherMax: gatherMax,
		diag: &diagnosticsLog{path: filepath.Join(e.cfg.Dir, "artifacts", opID, "diagnostics.log"), ref: filepath.Join("artifacts", opID, "diagnostics.log")}}
}

func (l *loop) run(ctx context.Context) {
	l.jobs, l.stopJobs = context.WithCancel(ctx)
	defer l.stopJobs()
	life, endLife := context.WithCancel(ctx)
	l.life = life
	defer l.assists.Wait() // after endLife: an analysis ends with the loop
	defer endLife()
	defer l.diag.close()
	for ctx.Err() == nil {
		st, err := l.state(ctx)
		again := false
		if err == nil && len(st.commands) > 0 {
			err, again = l.applyCommands(ctx, st), true // then decide on what they made
			st = nil
		}
		if err == nil && !again && l.recheck {
			err, again = l.recheckNow(ctx), true
			st = nil
		}
		if err == nil && !again && l.pending != nil && st.op.Status.Terminal() {
			err = l.commit(ctx, l.change(st.op)) // the results that ended it
		}
		if err == nil && !again && st.op.Status.Terminal() && len(l.inflight) > 0 {
			l.abandon() // the operation ended durably while work was out
		}
		if err == nil && !again {
			if st.op.Status.Terminal() && len(l.inflight) == 0 {
				endLife()
				l.assists.Wait()    // what they sent (a recheck, an analysis's record) is decided next
				l.lastCommands(ctx) // the loop is its one writer to the end
				if l.recheck {
					if err := l.recheckNow(ctx); err != nil { // the commit that ended it ends its proposals
						l.e.cfg.Log.Warn("the ended operation's proposals were not judged again", "operation", l.opID, "err", err.Error())
					}
				}
				l.cancelChildren(ctx, st) // none outlives it, however it ended
				if kept, err := l.e.cfg.Store.OperationRecords(ctx, l.org, l.opID, capstan.RecordArtifact); err == nil {
					l.e.pruneOutputs(l.opID, kept.Artifacts)
				} else {
					l.e.cfg.Log.Warn("the ended operation's outputs were not pruned", "operation", l.opID, "err", err.Error())
				}
				l.e.dropSandbox(l.opID)
				if st.op.ParentID != "" {
					l.e.Notify(l.org, st.op.ParentID) // the parent follows its child
				}
				return
			}
			again, err = l.step(ctx, st)
			if err == nil && l.pending != nil { // the step had nothing to add
				err = l.commit(ctx, l.change(st.op))
			}
		}
		// A conflict means someone else changed the operation: decide
		// again at once on a fresh read. One that repeats is not that
		// (the stored operation cannot take the step) and waits like
		// any failure instead of spinning.
		if capstan.ErrorCode(err) == capstan.ECONFLICT {
			l.conflicts++
		} else {
			l.conflicts = 0
		}
		if capstan.IsFenced(err) {
			l.e.fencedShard(l.shard, err) // another executor runs this operation now
			return
		}
		if err != nil {
			l.dirty = true // a failed step may have moved the cached state: read the stored one
		}
		if err != nil && l.draining && len(l.inflight) == 0 {
			return // handed over: the next owner tries the step
		}
		if err != nil && (capstan.ErrorCode(err) != capstan.ECONFLICT || l.conflicts > maxConflicts) {
			l.e.cfg.Log.Warn("operation step failed; retrying", "operation", l.opID, "err", err.Error())
			select {
			case <-l.e.cfg.Clock.After(time.Second):
			case <-l.drainSignal():
				l.draining = true
			case <-ctx.Done():
				return
			}
			continue
		}
		if err != nil || again {
			continue // something changed: decide again on a fresh read
		}
		if l.draining && len(l.inflight) == 0 && l.pending == nil {
			return // handed over with nothing out: the next owner goes on from here
		}
		l.wait(ctx)
	}
}

// wait hands queued work to workers until something happens that may
// change what the operation does next.
func (l *loop) wait(ctx context.Context) {
	for {
		reopened := l.reopened() // before Open: a move after it closes this one
		if reopened != nil && l.window.Open() {
			l.resume() // it moved while the loop was elsewhere
			continue
		}
		var send chan func()
		var head func()
		if l.canHand() && ctx.Err() == nil { // a select picks at random: an ended loop hands out nothing
			send, head = l.e.tasks, l.queue[0].task
		}
		select {
		case send <- head:
			l.handed()
			continue
		case r := <-l.results:
			rs := l.gather(ctx, r)
			if err := l.finish(ctx, rs); err != nil {
				l.e.cfg.Log.Warn("recording node results failed", "operation", l.opID, "err", err.Error())
			}
		case node := <-l.due:
			delete(l.scheduled, node)
			if gate, ok := strings.CutPrefix(node, gateTimer); ok {
				if err := l.timeoutGate(ctx, gate); err != nil {
					l.e.cfg.Log.Warn("timing out a gate failed", "operation", l.opID, "node", gate, "err", err.Error())
				}
				break
			}
			if err := l.retry(ctx, node); err != nil {
				l.e.cfg.Log.Warn("retrying a node failed", "operation", l.opID, "node", node, "err", err.Error())
			}
		case <-l.wake:
			if !l.woken() {
				continue // its own commits, told back by the tailer
			}
			l.dirty = true // an outside change (a decision, an intervention)
		case <-reopened:
			l.resume()
			continue
		case <-l.drainSignal():
			l.draining = true
		case <-ctx.Done():
		}
		return
	}
}

// drainSignal is the shard's hand-over signal until the loop saw it
// (then nil: a closed channel would fire at every wait).
func (l *loop) drainSignal() <-chan struct{} {
	if l.draining {
		return nil
	}
	return l.drain
}

// state returns the cached state, reading it again when it may be stale.
func (l *loop) state(ctx context.Context) (*state, error) {
	if l.cached != nil && !l.dirty {
		return l.cached, nil
	}
	told := l.note.upTo.Load() // a read from here includes what was told so far
	st, err := l.load(ctx)
	if err != nil {
		return nil, err
	}
	l.sawUpTo(told)
	l.cached, l.dirty = st, false
	return st, nil
}

// change returns the change to add to: the recorded results waiting to
// be committed, or a new one.
func (l *loop) change(op *capstan.Operation) *capstan.OperationChange {
	if ch := l.pending; ch != nil && ch.Operation == op {
		l.pending = nil
		return ch
	}
	l.pending = nil
	return &capstan.OperationChange{Operation: op}
}

// commit persists a change; on success the cached state takes it in (the
// operation is updated in place by the store), on failure it is reread.
func (l *loop) commit(ctx context.Context, ch *capstan.OperationChange) error {
	if p := l.pending; p != nil && p.Operation == ch.Operation { // never leave recorded results behind
		ch.Interventions = append(l.pending.Interventions, ch.Interventions...)
		ch.NodeRuns = append(l.pending.NodeRuns, ch.NodeRuns...)
		ch.Evidence = append(l.pending.Evidence, ch.Evidence...)
		ch.Artifacts = append(l.pending.Artifacts, ch.Artifacts...)
		ch.Gates = append(l.pending.Gates, ch.Gates...)
		ch.Events = append(l.pending.Events, ch.Events...)
		for _, r := range l.pending.Resources { // a host key pinned on first use
			if !slices.ContainsFunc(ch.Resources, func(x *capstan.Resource) bool { return x.Key() == r.Key() }) {
				ch.Resources = append(ch.Resources, r)
			}
		}
	}
	l.pending = nil
	if err := l.conclude(ctx, ch); err != nil {
		l.dirty = true // the cached state may hold what this change moved
		l.assist = nil
		return err
	}
	ch.Fence = l.fence
	if err := l.e.cfg.Store.ApplyOperationChange(ctx, l.org, ch); err != nil {
		l.dirty = true
		l.assist = nil // the failures were not recorded: the next read decides again
		return err
	}
	for _, e := range ch.Events {
		l.sawUpTo(e.Sequence)
	}
	if len(l.assist) > 0 && l.cached != nil {
		l.startAssists(l.cached.plan)
	}
	if len(ch.Operation.OpenPatches) > 0 && (len(ch.NodeRuns) > 0 || ch.Operation.Status.Terminal()) {
		l.recheckPatches()
	}
	if l.cached == nil || ch.Operation != l.cached.op {
		l.dirty = true
		return nil
	}
	if ch.Plan != nil && ch.Plan.Revision == l.cached.plan.Revision {
		l.cached.plan = ch.Plan // its bindings followed a sub-operation
	}
	for _, r := range ch.NodeRuns {
		l.cached.set(r)
	}
	return nil
}

func (l *loop) load(ctx context.Context) (*state, error) {
	op, err := l.e.cfg.Store.GetOperation(ctx, l.org, l.opID)
	if err != nil {
		return nil, err
	}
	if orphan, err := l.orphaned(ctx, op); err != nil || orphan {
		if err == nil {
			err = l.e.cfg.Hooks.CancelChild(ctx, l.org, op.ID)
		}
		if err != nil {
			return nil, err
		}
		if op, err = l.e.cfg.Store.GetOperation(ctx, l.org, l.opID); err != nil {
			return nil, err
		}
	}
	plan, err := l.plan(ctx, op)
	if err != nil {
		return nil, err
	}
	// What deciding takes; not the evidence (read where an operation
	// ends), and the artifacts only the first time.
	kinds := []string{capstan.RecordNodeRun, capstan.RecordGate, capstan.RecordIntervention, capstan.RecordCommand}
	restore := !l.restored && !op.Status.Terminal()
	if restore {
		kinds = append(kinds, capstan.RecordArtifact)
	}
	recs, err := l.e.cfg.Store.OperationRecords(ctx, l.org, l.opID, kinds...)
	if err != nil {
		return nil, err
	}
	if restore {
		l.restored = true // once a loop: what this replica's jobs keep later is in outputs already
		l.restoreOutputs(ctx, recs.Artifacts)
	}
	idx := l.index(plan)
	runs := recs.NodeRuns[:0:0]
	for _, r := range recs.NodeRuns {
		if idx.nodes[r.NodeID] == nil { // a node a patch removed: its run is history
			continue
		}
		runs = append(runs, r)
	}
	st := newState(op, plan, runs, idx)
	st.commands = recs.PendingCommands()
	for _, iv := range recs.Interventions {
		if old, ok := st.intervened[iv.TargetNode]; !ok || !iv.At.Before(old.At) {
			st.intervened[iv.TargetNode] = iv
		}
	}
	for _, g := range recs.Gates {
		if len(g.Decisions) > 0 {
			st.decided[g.NodeID] = g
		}
	}
	return st, nil
}

// orphaned reports whether op is a child operation still going whose
// parent ended: a crash between the parent's last commit and its asking
// the child to stop leaves one, and the child then stops itself.
func (l *loop) orphaned(ctx context.Context, op *capstan.Operation) (bool, error) {
	if op.ParentID == "" || l.e.cfg.Hooks == nil || op.Status.Terminal() || op.Status == capstan.OperationCancelling {
		return false, nil
	}
	parent, err := l.e.cfg.Store.GetOperation(ctx, l.org, op.ParentID)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return parent.Status.Terminal(), nil
}

// event records e as the executor's.
func (l *loop) event(e event.Event) capstan.OperationEvent { return event.Record("executor", e) }

func (l *loop) now() *time.Time {
	t := l.e.databaseNow().UTC()
	return &t
}

// cancel stops the operation's jobs, waits for them, and ends every
// unfinished node cancelled.
func (l *loop) cancel(ctx context.Context, st *state) (bool, error) {
	l.abandon()
	if len(l.inflight) > 0 {
		return false, nil // their results come back; then this runs again
	}
	l.cancelChildren(ctx, st)
	ch := l.change(st.op)
	for _, r := range st.runs {
		if r.Status == capstan.NodeFailed {
			if err := r.Move(capstan.NodeWaitingIntervention); err != nil {
				return false, err
			}
			st.set(r)
		}
	}
	if err := l.endRuns(st, ch); err != nil {
		return false, err
	}
	if err := st.op.Move(capstan.OperationCancelled); err != nil {
		return false, err
	}
	st.op.CompletedAt = l.now()
	ch.Events = append(ch.Events, l.event(event.OperationMoved(capstan.OperationCancelled)))
	return true, l.commit(ctx, ch)
}

// abandon stops the operation's jobs (their process groups are killed)
// and forgets the work no worker took yet; the results of what was out
// still come back and are waited for, but nothing records them.
func (l *loop) abandon() {
	l.stopJobs()
	for _, q := range append(l.queue, l.held...) {
		delete(l.inflight, q.node) // never started: nothing to wait for
	}
	l.queue, l.held = nil, nil
}

func waitingReason(n *capstan.PlanNode) string {
	if n.Type == capstan.NodeSubOperation {
		return "needs attention: sub-operation " + n.SubOperation.Scenario + " is not run by this executor yet"
	}
	return "waiting for a recorded intervention: " + n.Intervention.Instructions
}

func (l *loop) complete(ctx context.Context, op *capstan.Operation, outcome capstan.OperationStatus) error {
	ch := l.change(op)
	if op.Status == capstan.OperationWaiting && outcome == capstan.OperationSucceeded {
		if err := op.Move(capstan.OperationRunning); err != nil {
			return err
		}
	}
	if err := op.Move(outcome); err != nil {
		return err
	}
	op.CompletedAt = l.now()
	ch.Events = append(ch.Events, l.event(event.OperationMoved(outcome)))
	return l.commit(ctx, ch)
}

// verify re-runs a node's evidence probes on a worker, without its job.
func (l *loop) verify(ctx context.Context, n *capstan.PlanNode, attempt int) {
	l.start(ctx, n, attempt, kindProbes)
}

// dispatch runs a job or verification attempt on a worker.
func (l *loop) dispatch(ctx context.Context, n *capstan.PlanNode, attempt int) {
	l.start(ctx, n, attempt, kindRun)
}

func (l *loop) start(ctx context.Context, n *capstan.PlanNode, attempt int, kind attemptKind) {
	l.inflight[n.ID] = true
	var scope attemptScope
	if l.cached != nil {
		scope = attemptScope{resource: l.cached.op.ResourceKey, nodes: l.cached.idx.nodes, plan: l.cached.plan}
		if hasCapabilityProbe(n) {
			scope.made = l.cached.made()
		}
	}
	l.queue = append(l.queue, queued{node: n.ID, task: l.attemptTask(ctx, l.jobs, *n, attempt, kind, scope, nil)})
}

// attemptTask is a worker's task for an attempt of node: from its start,
// or, after prior was refused by the window, from where prior stopped.
func (l *loop) attemptTask(ctx, jobs context.Context, node capstan.PlanNode, attempt int, kind attemptKind, scope attemptScope, prior *nodeResult) func() {
	return func() {
		r := l.attempt(jobs, &node, attempt, kind, scope, prior)
		if r.refused {
			stopped := r
			r.again = queued{node: node.ID, task: l.attemptTask(ctx, jobs, node, attempt, kind, scope, &stopped)}
		}
		select {
		case l.results <- r:
		case <-ctx.Done():
		}
	}
}

// reopened is the window's signal while work waits for it (nil else).
func (l *loop) reopened() <-chan struct{} {
	if len(l.held) == 0 {
		return nil
	}
	return l.window.Moved()
}

// resume queues the work the window refused again, after it moved.
func (l *loop) resume() {
	l.queue = append(l.queue, l.held...)
	l.held = nil
}

// plan returns the operation's plan. A started plan is frozen
// (invariant 4), so the loop reads it once per plan revision.
func (l *loop) plan(ctx context.Context, op *capstan.Operation) (*capstan.Plan, error) {
	if c := l.cached; c != nil && c.plan.ID == op.PlanID && c.plan.Revision == op.PlanRevision {
		return c.plan, nil
	}
	if p := l.started; p != nil {
		l.started = nil
		if p.ID == op.PlanID && p.Revision == op.PlanRevision {
			return p, nil
		}
	}
	return l.e.cfg.Store.GetPlan(ctx, l.org, op.PlanID)
}

// index returns the plan's index, built once per plan revision.
func (l *loop) index(p *capstan.Plan) *planIndex {
	if l.idx == nil || l.idxPlan != p.ID || l.idxRevision != p.Revision {
		l.idx, l.idxPlan, l.idxRevision = newIndex(p), p.ID, p.Revision
	}
	return l.idx
}
