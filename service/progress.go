package service

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/planner"
)

// Progress is the simple-mode view of a running operation: what the user
// asked for, where it is, how far along, and what needs a person.
type Progress struct {
	Operation         *capstan.Operation
	DesiredResult     map[string]any
	CurrentPhase      string
	CompletedNodes    int
	TotalNodes        int
	NeedsAttention    []string
	ResourceHealth    capstan.HealthStatus
	ResourceLifecycle capstan.LifecycleStatus
	// Sequence is the last timeline event the view reflects.
	Sequence int64
}

// Status is the operation's status.
func (p *Progress) Status() capstan.OperationStatus { return p.Operation.Status }

// Health is the health of the operation's resource, nil when it changes none.
func (p *Progress) Health() *capstan.HealthStatus {
	if p.ResourceHealth == "" {
		return nil
	}
	return &p.ResourceHealth
}

// Lifecycle is the lifecycle of the operation's resource, nil when it changes none.
func (p *Progress) Lifecycle() *capstan.LifecycleStatus {
	if p.ResourceLifecycle == "" {
		return nil
	}
	return &p.ResourceLifecycle
}

// Fraction is the share of nodes done, 0 to 1.
func (p *Progress) Fraction() float64 {
	if p.TotalNodes == 0 {
		return 0
	}
	return float64(p.CompletedNodes) / float64(p.TotalNodes)
}

// ProgressOf projects an operation for simple mode. Stages only group
// nodes and are not counted; a node is done when it succeeded, was skipped
// or rolled back. The current phase is the first node (in plan order) that
// runs or waits, else the operation's status.
func ProgressOf(op *capstan.Operation, plan *capstan.Plan, runs []capstan.OperationNodeRun) Progress {
	p := Progress{Operation: op}
	byNode := map[string]capstan.OperationNodeRun{}
	for _, r := range runs {
		byNode[r.NodeID] = r
	}
	for _, n := range plan.Nodes {
		if n.Type == capstan.NodeStage {
			continue
		}
		p.TotalNodes++
		r := byNode[n.ID]
		switch r.Status {
		case capstan.NodeSucceeded, capstan.NodeSkipped, capstan.NodeRolledBack:
			p.CompletedNodes++
		case capstan.NodeRunning, capstan.NodeVerifying, capstan.NodeRetrying:
			if p.CurrentPhase == "" {
				p.CurrentPhase = n.Title
			}
		case capstan.NodeWaitingApproval:
			p.NeedsAttention = append(p.NeedsAttention, fmt.Sprintf("%s: waiting for approval (%v)", n.Title, n.Gate.RequiredRoles))
			if p.CurrentPhase == "" {
				p.CurrentPhase = n.Title
			}
		case capstan.NodeWaitingIntervention, capstan.NodeFailed:
			p.NeedsAttention = append(p.NeedsAttention, fmt.Sprintf("%s: %s", n.Title, r.Error))
			if p.CurrentPhase == "" {
				p.CurrentPhase = n.Title
			}
		}
	}
	if p.CurrentPhase == "" || op.Status.Terminal() {
		p.CurrentPhase = string(op.Status)
	}
	for _, id := range op.OpenPatches {
		p.NeedsAttention = append(p.NeedsAttention, fmt.Sprintf("%s awaits approval", capstan.Named("plan patch", id)))
	}
	if p.NeedsAttention == nil {
		p.NeedsAttention = []string{}
	}
	return p
}

// CurrentNodes lists the nodes of a plan that run or wait now (the
// seed's current_node), in plan order: running, verifying or retrying,
// waiting for an approval or an intervention, or failed and waiting for
// a person.
func CurrentNodes(plan *capstan.Plan, runs []capstan.OperationNodeRun) []string {
	open := map[string]bool{}
	for _, r := range runs {
		switch r.Status {
		case capstan.NodeRunning, capstan.NodeVerifying, capstan.NodeRetrying, capstan.NodeWaitingApproval,
			capstan.NodeWaitingIntervention, capstan.NodeFailed:
			open[r.NodeID] = true
		}
	}
	out := []string{}
	for _, n := range plan.Nodes {
		if open[n.ID] {
			out = append(out, n.ID)
		}
	}
	return out
}

// progressCache computes an operation's progress once per timeline
// position, however many subscribers ask for it.
type progressCache struct {
	mu    sync.Mutex
	byOp  map[string]*Progress
	at    map[string]time.Time // when byOp's entry was computed
	locks map[string]*sync.Mutex
	swept time.Time
}

// progressTTL bounds how long a computed progress is kept: the cache only
// spares subscribers of one operation computing the same view within a
// coalescing window, and an operation whose last viewer left before its
// end would otherwise stay cached for the life of the server (the soak
// test saw the heap grow with every such operation).
const progressTTL = 10 * time.Second

// sweep drops the entries computed more than progressTTL ago, at most
// once per TTL (c.mu held).
func (c *progressCache) sweep(now time.Time) {
	if now.Sub(c.swept) < progressTTL {
		return
	}
	c.swept = now
	for k, at := range c.at {
		if now.Sub(at) > progressTTL {
			delete(c.byOp, k)
			delete(c.at, k)
			delete(c.locks, k) // nobody computed it for a TTL: a late one makes a new lock
		}
	}
}

// OperationProgress returns the operation's progress as of at least
// timeline position seq, computing it at most once per position.
func (s *Service) OperationProgress(ctx context.Context, opID string, seq int64) (*Progress, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	org, key := a.OrganizationID, a.OrganizationID+"|"+opID
	c := &s.progress
	c.mu.Lock()
	if c.byOp == nil {
		c.byOp, c.at, c.locks = map[string]*Progress{}, map[string]time.Time{}, map[string]*sync.Mutex{}
	}
	if p := c.byOp[key]; p != nil && p.Sequence >= seq && seq > 0 {
		c.mu.Unlock()
		return p, nil
	}
	lock := c.locks[key]
	if lock == nil {
		lock = &sync.Mutex{}
		c.locks[key] = lock
	}
	c.mu.Unlock()
	lock.Lock() // one computation per operation at a time; the rest reuse it
	defer lock.Unlock()
	c.mu.Lock()
	if p := c.byOp[key]; p != nil && p.Sequence >= seq && seq > 0 {
		c.mu.Unlock()
		return p, nil
	}
	c.mu.Unlock()
	p, err := s.computeProgress(ctx, org, opID, seq)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	now := s.Now()
	if p.Operation.Status.Terminal() {
		delete(c.byOp, key) // nothing will change it again: keep no cache
		delete(c.at, key)
		delete(c.locks, key)
	} else {
		c.byOp[key], c.at[key] = p, now
	}
	c.sweep(now)
	c.mu.Unlock()
	return p, nil
}

// computeProgress reads the operation's progress; seq is the timeline
// position the caller knows of (0: find it), read before the records, so
// the records are at least as new as the position the view claims.
func (s *Service) computeProgress(ctx context.Context, org, opID string, seq int64) (*Progress, error) {
	op, err := s.Store.GetOperation(ctx, org, opID)
	if err != nil {
		return nil, err
	}
	if seq == 0 {
		if seq, err = s.lastEvent(ctx, org, op); err != nil {
			return nil, err
		}
	}
	plan, err := s.Store.GetPlan(ctx, org, op.PlanID)
	if err != nil {
		return nil, err
	}
	recs, err := s.Store.OperationRecords(ctx, org, opID)
	if err != nil {
		return nil, err
	}
	in, err := s.Store.GetIntent(ctx, org, op.IntentID)
	if err != nil {
		return nil, err
	}
	p := ProgressOf(op, plan, recs.NodeRuns)
	p.DesiredResult, p.Sequence = in.DesiredResult, seq
	if op.ResourceKey != "" {
		if r, err := s.Store.GetResourceByKey(ctx, org, op.ResourceKey); err == nil {
			p.ResourceHealth, p.ResourceLifecycle = r.HealthStatus, r.LifecycleStatus
		}
	}
	if !op.Status.Terminal() { // what it works with drifted: a person should know
		drift, err := s.unresolvedDrift(ctx, org, plan, op)
		if err != nil {
			return nil, err
		}
		p.NeedsAttention = append(p.NeedsAttention, drift...)
	}
	return &p, nil
}

// lastEvent returns the sequence of the operation's newest event.
func (s *Service) lastEvent(ctx context.Context, org string, op *capstan.Operation) (int64, error) {
	var last int64
	for {
		events, err := s.Store.ListEvents(ctx, org, op.ID, last, 1000)
		if err != nil {
			return 0, err
		}
		if len(events) == 0 {
			return last, nil
		}
		last = events[len(events)-1].Sequence
	}
}

// PlanSummary is the simple-mode summary of a plan: what the plan
// foresees before it starts; its operation's phase, progress and needs
// once it has (while it runs and after it ended).
func (s *Service) PlanSummary(ctx context.Context, plan *capstan.Plan) (planner.Summary, error) {
	sum := planner.Summarize(plan)
	if plan.Status.Editable() {
		// Before it starts, a person should know when the operation would
		// run again on a resource that exists, or fail on it at once.
		t, err := s.PlanTarget(ctx, plan)
		if err != nil {
			return sum, err
		}
		if t != nil && (t.Effect == capstan.TargetReapply || t.Effect == capstan.TargetRefused) {
			sum.NeedsAttention = append([]string{t.Description}, sum.NeedsAttention...)
		}
		return sum, nil
	}
	if plan.Status == capstan.PlanSuperseded {
		return sum, nil
	}
	ops, _, err := s.Operations(ctx, capstan.OperationFilter{PlanID: plan.ID, Limit: 1})
	if err != nil || len(ops) == 0 {
		return sum, err
	}
	p, err := s.OperationProgress(ctx, ops[0].ID, 0)
	if err != nil {
		return sum, err
	}
	return sum.WithRun(p.CurrentPhase, p.Fraction(), p.NeedsAttention), nil
}

// PatchesAwaitingApproval counts the operation's proposed patches.
func (p *Progress) PatchesAwaitingApproval() int { return len(p.Operation.OpenPatches) }
