package executor

import (
	"context"
	"maps"
	"slices"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// What an operation's start and end do to its resource, its intent and
// its plan is computed here by the root package's lifecycle functions and
// committed with the operation's own step, in one transaction: there is
// no moment where the operation has started or ended and they have not.

// begin moves a pending operation to running, and its resource into its
// changing lifecycle in the same commit; a resource that cannot change
// (another operation changes it, it does not exist and the action does
// not create it) fails the operation at once, with the reason.
func (l *loop) begin(ctx context.Context, st *state) error {
	op := st.op
	ch := l.change(op)
	var reason string
	if op.ResourceKey != "" {
		r, before, err := l.beginResource(ctx, st)
		switch {
		case err != nil && !permanent(err):
			return err
		case err != nil:
			reason = "resource " + op.ResourceKey + ": " + capstan.ErrorMessage(err)
		case r != nil:
			ch.Resources = append(ch.Resources, r)
			op.ResourceBefore = &before
			ch.Events = append(ch.Events, l.event(event.Resource{What: "changing", Resource: op.ResourceKey, Lifecycle: string(r.LifecycleStatus)}))
		}
	}
	if err := op.Move(capstan.OperationRunning); err != nil {
		return err // cannot happen: step calls begin for a pending operation only
	}
	op.StartedAt = l.now()
	ch.Events = append(ch.Events, l.event(event.OperationMoved(capstan.OperationRunning)))
	if reason != "" {
		if err := op.Move(capstan.OperationFailed); err != nil {
			return err // cannot happen: running -> failed is legal
		}
		op.CompletedAt = l.now()
		ch.Events = append(ch.Events, l.event(event.Operation{What: "failed", Reason: reason}))
	}
	return l.commit(ctx, ch)
}

// beginResource reads the operation's resource and returns it as the
// start leaves it, with what the operation found; nil when the operation
// already holds it.
func (l *loop) beginResource(ctx context.Context, st *state) (*capstan.Resource, capstan.ResourceState, error) {
	op, store := st.op, l.e.cfg.Store
	stored, err := store.GetResourceByKey(ctx, l.org, op.ResourceKey)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		stored, err = nil, nil
	}
	if err != nil {
		return nil, capstan.ResourceState{}, err
	}
	if stored != nil && stored.ActiveOperationID == op.ID {
		return nil, capstan.ResourceState{}, nil
	}
	busy := false
	if stored != nil && stored.ActiveOperationID != "" {
		other, err := store.GetOperation(ctx, l.org, stored.ActiveOperationID)
		if err != nil && capstan.ErrorCode(err) != capstan.ENOTFOUND {
			return nil, capstan.ResourceState{}, err
		}
		busy = err == nil && !other.Status.Terminal()
	}
	var fresh *capstan.Resource
	if stored == nil && capstan.CreatesResource(op.Action) {
		in, err := store.GetIntent(ctx, l.org, op.IntentID)
		if err != nil {
			return nil, capstan.ResourceState{}, err
		}
		sc, err := store.GetScenario(ctx, l.org, st.plan.ScenarioRef)
		if err != nil {
			return nil, capstan.ResourceState{}, err
		}
		fresh = capstan.ResourceFor(op, in, sc, st.plan)
	}
	r, before, err := capstan.BeginChange(op, stored, fresh, busy)
	if err != nil && stored != nil && busy {
		err = capstan.Errorf(capstan.ECONFLICT, "resource %s is being changed by operation %s", stored.Key(), capstan.OperationGID(stored.ActiveOperationID))
	}
	return r, before, err
}

// permanent reports whether an error will not go away by trying again.
func permanent(err error) bool {
	switch capstan.ErrorCode(err) {
	case capstan.EINVALID, capstan.ENOTFOUND, capstan.ECONFLICT, capstan.EFORBIDDEN:
		return true
	}
	return false
}

// conclude runs before a change that ends the operation commits: it adds
// the intent and the plan following the outcome, and the resource's final
// lifecycle, health and observed state, to the same change. Repeated
// after a lost race, it reads them again.
func (l *loop) conclude(ctx context.Context, ch *capstan.OperationChange) error {
	op := ch.Operation
	if !op.Status.Terminal() || !ends(ch) {
		return nil
	}
	plan, err := capstan.FollowInto(ctx, l.e.cfg.Store, l.org, ch, "executor")
	if err != nil {
		return err
	}
	if op.ResourceKey == "" {
		return nil
	}
	return l.concludeResource(ctx, ch, plan)
}

// concludeResource adds the resource as the operation's end leaves it.
func (l *loop) concludeResource(ctx context.Context, ch *capstan.OperationChange, plan *capstan.Plan) error {
	op, store := ch.Operation, l.e.cfg.Store
	r, err := store.GetResourceByKey(ctx, l.org, op.ResourceKey)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return nil // never begun: the operation ended before it started
	}
	if err != nil {
		return err
	}
	recs, err := store.OperationRecords(ctx, l.org, op.ID, capstan.RecordNodeRun, capstan.RecordEvidence, capstan.RecordArtifact)
	if err != nil {
		return err
	}
	runs := map[string]capstan.OperationNodeRun{}
	for _, run := range append(recs.NodeRuns, ch.NodeRuns...) {
		runs[run.NodeID] = run
	}
	ended := capstan.EndChange(r, op, workRan(plan, runs), append(slices.Clip(recs.Evidence), ch.Evidence...), l.e.databaseNow())
	if ended == nil {
		return nil // not this operation's to conclude, or concluded already
	}
	evidence := append(recs.Evidence, ch.Evidence...)
	desired, err := l.desiredState(ctx, op, plan)
	if err != nil {
		return err
	}
	desired = withApplied(desired, r, op, evidence)
	if desired != nil {
		ended.DesiredState = desired
	}
	if err := l.fillProvided(ctx, ch, ended, plan, append(slices.Clip(recs.Artifacts), ch.Artifacts...)); err != nil {
		return err
	}
	if ended.LifecycleStatus != r.LifecycleStatus {
		if err := capstan.LifecycleStatuses.Check(r.LifecycleStatus, ended.LifecycleStatus); err != nil {
			// Someone moved it meanwhile (a catalog re-import): keep what
			// they set, say so, and still let the operation go.
			ended.LifecycleStatus, ended.HealthStatus = r.LifecycleStatus, r.HealthStatus
			ch.Events = append(ch.Events, l.event(event.Resource{What: "lifecycle_kept", Resource: op.ResourceKey, Reason: capstan.ErrorMessage(err)}))
		}
	}
	for _, other := range ch.Resources {
		if other.Key() == ended.Key() { // changed by this very step (a binding): keep its edges
			ended.Relationships, ended.Version = other.Relationships, other.Version
		}
	}
	ch.Resources = append(withoutKey(ch.Resources, ended.Key()), ended)
	concluded := event.Resource{What: "concluded", Resource: op.ResourceKey, Outcome: string(op.Status),
		Lifecycle: string(ended.LifecycleStatus), Health: string(ended.HealthStatus), DesiredState: desired}
	ch.Events = append(ch.Events, l.event(concluded))
	return nil
}

// withApplied is desired (the scenario's, or nil: the resource's own)
// with the objects a succeeded operation applied recorded in it
// (capstan.AppliedObjects): what a drift probe compares and a repair
// applies again. An operation that applied nothing leaves it be.
func withApplied(desired map[string]any, r *capstan.Resource, op *capstan.Operation, evidence []capstan.Evidence) map[string]any {
	if op.Status != capstan.OperationSucceeded {
		return desired
	}
	prev := r.DesiredState[capstan.AppliedObjectsKey]
	evidence = slices.Clone(evidence)
	slices.SortStableFunc(evidence, func(a, b capstan.Evidence) int { return a.ObservedAt.Compare(b.ObservedAt) })
	objs := capstan.AppliedObjects(prev, evidence)
	if objs == nil && prev == nil {
		return desired
	}
	if desired == nil {
		desired = maps.Clone(r.DesiredState)
	}
	if desired == nil {
		desired = map[string]any{}
	}
	if objs == nil {
		delete(desired, capstan.AppliedObjectsKey)
	} else {
		desired[capstan.AppliedObjectsKey] = objs
	}
	return desired
}

// desiredState is what a succeeded operation's scenario declares the
// resource should now be (nil when it declares nothing, or the
// operation did not succeed: a failed one set nothing).
func (l *loop) desiredState(ctx context.Context, op *capstan.Operation, plan *capstan.Plan) (map[string]any, error) {
	if op.Status != capstan.OperationSucceeded || plan == nil || plan.ScenarioRef == "" {
		return nil, nil
	}
	return l.scenarioDesired(ctx, plan)
}

// scenarioDesired is the desired state plan's scenario declares (nil
// when none).
func (l *loop) scenarioDesired(ctx context.Context, plan *capstan.Plan) (map[string]any, error) {
	if plan == nil || plan.ScenarioRef == "" {
		return nil, nil
	}
	sc, err := l.e.cfg.Store.GetScenario(ctx, l.org, plan.ScenarioRef)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return nil, nil
	}
	if err != nil || sc.DesiredState == nil {
		return nil, err
	}
	return maps.Clone(sc.DesiredState), nil
}

// desiredFor is the desired state an attempt works towards and its
// probes check: the scenario's, or else (a repair) the one the
// resource already holds. Neither changes while the operation runs, so
// it is read once per loop (its attempts share it, read-only); a failed
// read is tried again by the next attempt.
func (l *loop) desiredFor(ctx context.Context, plan *capstan.Plan, resource string) (map[string]any, error) {
	l.desired.mu.Lock()
	defer l.desired.mu.Unlock()
	if l.desired.read {
		return l.desired.state, nil
	}
	d, err := l.readDesired(ctx, plan, resource)
	if err != nil {
		return nil, err
	}
	l.desired.state, l.desired.read = d, true
	return d, nil
}

func (l *loop) readDesired(ctx context.Context, plan *capstan.Plan, resource string) (map[string]any, error) {
	if d, err := l.scenarioDesired(ctx, plan); d != nil || err != nil {
		return d, err
	}
	if resource == "" {
		return nil, nil
	}
	r, err := l.e.cfg.Store.GetResourceByKey(ctx, l.org, resource)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r.DesiredState, nil
}

// ends reports whether ch carries the event of its operation's end.
func ends(ch *capstan.OperationChange) bool {
	want := "operation." + string(ch.Operation.Status)
	for _, e := range ch.Events {
		if e.Type == want {
			return true
		}
	}
	return false
}

// workRan reports whether any work that may change the resource ran: a
// job or sub-operation that made an attempt, or a manual intervention
// that was recorded. Gates, verifications and analyses change nothing.
func workRan(plan *capstan.Plan, runs map[string]capstan.OperationNodeRun) bool {
	for id, r := range runs {
		n := plan.Node(id)
		if n == nil {
			continue
		}
		switch n.Type {
		case capstan.NodeJob, capstan.NodeSubOperation:
			if r.Attempts > 0 {
				return true
			}
		case capstan.NodeManualIntervention:
			switch r.Status {
			case capstan.NodeVerifying, capstan.NodeSucceeded, capstan.NodeFailed, capstan.NodeSkipped:
				return true
			}
		}
	}
	return false
}

func withoutKey(rs []*capstan.Resource, key string) []*capstan.Resource {
	out := rs[:0:0]
	for _, r := range rs {
		if r.Key() != key {
			out = append(out, r)
		}
	}
	return out
}
