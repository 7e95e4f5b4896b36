package capstan

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"
)

// The lifecycle of the resource an operation changes, as pure functions:
// the executor reads the resource, computes its next state here and
// commits it with the operation's own step (OperationChange.Resources).

// ResourceState is what an operation found its resource in when it
// began, so that an end which changed nothing leaves it as it was.
type ResourceState struct {
	// Existed is false when the operation created the resource.
	Existed   bool            `json:"existed"`
	Lifecycle LifecycleStatus `json:"lifecycle,omitempty"`
	Health    HealthStatus    `json:"health,omitempty"`
}

// CreatesResource reports whether an action brings its resource into
// being (a resource that does not exist yet is created for it).
func CreatesResource(action string) bool { return action == "install" || action == "create" }

// DeletesResource reports whether an action takes its resource away.
func DeletesResource(action string) bool { return action == "uninstall" || action == "delete" }

// ChangeLifecycle returns the lifecycle status a resource takes while an
// operation with action changes it, from current (found false: it does
// not exist yet). A resource already in that status stays in it (a
// catalog row being provisioned is taken over by a create). Every
// status has a way on: create provisions what is planned, failed or
// deleted; repair repairs what is active, degraded, failed or updating;
// delete deletes anything not deleted; other actions update what works
// (active, degraded) and finish a provisioning. What is left is refused
// with the reason (EINVALID; ENOTFOUND for a change of nothing).
func ChangeLifecycle(action string, current LifecycleStatus, found bool) (LifecycleStatus, error) {
	if !found {
		if !CreatesResource(action) {
			return "", Errorf(ENOTFOUND, "a %s operation needs an existing resource", action)
		}
		return LifecycleProvisioning, nil
	}
	to := changingStatus(action, current)
	if to == current {
		return to, nil
	}
	if to == "" {
		return "", Errorf(EINVALID, "a %s resource cannot take a %s operation", current, action)
	}
	if err := LifecycleStatuses.Check(current, to); err != nil {
		return "", err
	}
	return to, nil
}

// changingStatus is ChangeLifecycle's table: the status for action from
// current, "" when there is none.
func changingStatus(action string, current LifecycleStatus) LifecycleStatus {
	switch {
	case current == LifecycleDeleted:
		if CreatesResource(action) {
			return LifecycleProvisioning
		}
		return ""
	case DeletesResource(action):
		return LifecycleDeleting
	case current == LifecycleDeleting:
		return ""
	case action == "repair":
		if current == LifecyclePlanned || current == LifecycleProvisioning {
			return ""
		}
		return LifecycleRepairing
	case current == LifecyclePlanned || current == LifecycleProvisioning:
		if CreatesResource(action) || current == LifecycleProvisioning {
			return LifecycleProvisioning
		}
		return ""
	case current == LifecycleFailed:
		if CreatesResource(action) {
			return LifecycleProvisioning
		}
		return LifecycleRepairing
	case current == LifecycleRepairing:
		return ""
	}
	return LifecycleUpdating // active, degraded, updating
}

// EndLifecycle returns the lifecycle status and health a resource takes
// when the operation changing it (from status changing) ends with
// outcome. changed says whether any of the operation's work ran; an end
// that changed nothing (cancelled at its first gate, say) leaves the
// resource as the operation found it (before), and one that created it
// leaves it planned. A failed change of a working resource leaves it
// degraded; a failed provisioning or deletion, failed; a rolled-back
// change, as it was before, its health unknown.
func EndLifecycle(changing LifecycleStatus, before ResourceState, outcome OperationStatus, changed bool) (LifecycleStatus, HealthStatus) {
	if outcome == OperationSucceeded {
		if changing == LifecycleDeleting {
			return LifecycleDeleted, HealthUnknown
		}
		return LifecycleActive, HealthHealthy
	}
	if !changed || outcome == OperationRolledBack {
		health := before.Health
		if changed || health == "" {
			health = HealthUnknown
		}
		if !before.Existed {
			return LifecyclePlanned, health
		}
		return before.Lifecycle, health
	}
	switch {
	case before.Existed && before.Lifecycle == LifecycleFailed:
		return LifecycleFailed, HealthUnhealthy // a failed repair of a failed resource is no improvement
	case changing == LifecycleUpdating || changing == LifecycleRepairing:
		return LifecycleDegraded, HealthDegraded
	}
	return LifecycleFailed, HealthUnhealthy // provisioning, deleting
}

// BeginChange returns the resource as an operation's start leaves it and
// what the operation found: stored is the resource as read (nil when it
// does not exist) and fresh the resource an operation that creates it
// would store (nil when it would not). busy says another unfinished
// operation changes stored (ECONFLICT). The result points at op.
func BeginChange(op *Operation, stored, fresh *Resource, busy bool) (*Resource, ResourceState, error) {
	if stored != nil && busy {
		return nil, ResourceState{}, Errorf(ECONFLICT, "resource %s is being changed by %s", stored.Key(), Named("operation", stored.ActiveOperationID))
	}
	found := stored != nil
	var current LifecycleStatus
	if found {
		current = stored.LifecycleStatus
	}
	to, err := ChangeLifecycle(op.Action, current, found)
	if err != nil {
		return nil, ResourceState{}, err
	}
	if !found {
		if fresh == nil {
			return nil, ResourceState{}, Errorf(EINVALID, "%s has no description of the resource %s to create", Named("operation", op.ID), op.ResourceKey)
		}
		r := *fresh
		r.LifecycleStatus, r.HealthStatus, r.ActiveOperationID = to, HealthUnknown, op.ID
		return &r, ResourceState{}, nil
	}
	r := *stored
	r.LifecycleStatus, r.ActiveOperationID = to, op.ID
	return &r, ResourceState{Existed: true, Lifecycle: stored.LifecycleStatus, Health: stored.HealthStatus}, nil
}

// EndChange returns the resource as the end of the operation changing it
// leaves it: the final lifecycle and health for the outcome (see
// EndLifecycle), the observed state merged from the operation's evidence,
// and the operation as its last one; a change forgets the last health
// assessment (it described what was there before). It returns nil when the resource is
// not the operation's to conclude (another operation holds it, or it was
// concluded already).
func EndChange(r *Resource, op *Operation, changed bool, evidence []Evidence, now time.Time) *Resource {
	if r == nil || r.ActiveOperationID != op.ID {
		return nil
	}
	before := ResourceState{Existed: true, Lifecycle: LifecycleActive, Health: HealthUnknown}
	if op.ResourceBefore != nil {
		before = *op.ResourceBefore
	} else {
		// Begun before operations kept what they found: assume work ran
		// and the resource worked (what ends used to assume).
		changed = true
		before.Existed = r.LifecycleStatus != LifecycleProvisioning
	}
	out := *r
	out.LifecycleStatus, out.HealthStatus = EndLifecycle(r.LifecycleStatus, before, op.Status, changed)
	out.ActiveOperationID, out.LastOperationID = "", op.ID
	if changed {
		out.Assessment = nil // it described the resource before this change
	}
	if len(evidence) > 0 {
		out.ObservedState = ObservedState(r.ObservedState, evidence, now)
	}
	return &out
}

// ObservedState merges the latest result of every evidence item into a
// resource's observed state: evidence.<item> = passed|failed|…
func ObservedState(old map[string]any, evidence []Evidence, now time.Time) map[string]any {
	out := maps.Clone(old)
	if out == nil {
		out = map[string]any{}
	}
	items := map[string]any{}
	if prev, ok := out["evidence"].(map[string]any); ok {
		maps.Copy(items, prev)
	}
	for _, e := range evidence {
		items[e.Item] = e.Result
	}
	out["evidence"] = items
	out["observed_at"] = now.UTC().Format(time.RFC3339)
	return out
}

// FollowOperation returns the statuses an intent and its plan take when
// their operation ends with outcome: completed when it succeeded,
// cancelled when it was cancelled, failed otherwise (a rolled-back
// operation did not do what the intent asked).
func FollowOperation(outcome OperationStatus) (IntentStatus, PlanStatus) {
	switch outcome {
	case OperationSucceeded:
		return IntentCompleted, PlanCompleted
	case OperationCancelled:
		return IntentCancelled, PlanCancelled
	}
	return IntentFailed, PlanFailed
}

// ResourceFor describes the resource an operation that creates one
// stores when it begins: its type and name from the operation's resource
// key, the intent's environment, the capabilities its scenario provides
// (scoped to the intent's environment and region), and the relationships
// its plan's bindings imply: it runs on the workload's provider and uses
// every other provider bound to the plan's own requirements. It is no
// candidate for anyone until it is active.
func ResourceFor(op *Operation, in *Intent, sc *Scenario, plan *Plan) *Resource {
	typ, name, _ := SplitResourceKey(op.ResourceKey)
	r := &Resource{Type: typ, Name: name, Environment: in.Environment(), HealthStatus: HealthUnknown,
		Source: "operation:" + OperationGID(op.ID)}
	scope := map[string]any{}
	for _, k := range []string{"environment", "region"} {
		if v, ok := in.Constraints[k]; ok {
			scope[k] = v
		}
	}
	for _, pc := range sc.Provides {
		r.ProvidedCapabilities = append(r.ProvidedCapabilities, ProvidedCapability{Capability: pc.Capability, Scope: maps.Clone(scope), Attributes: KnownProvided(pc.Attributes)})
	}
	for _, b := range plan.Bindings {
		if b.Parent != "" || b.Provider == nil || b.Status != BindingResolved {
			continue // a sub-operation's own requirement, or nothing bound yet
		}
		r.Relationships = AddRelationship(r.Relationships, BindingRelationship(b.Requirement), b.Provider.ResourceKey)
	}
	return r
}

// BindingRelationship is the relationship a consumer has with the
// provider of a requirement: it runs on the workload's, uses the others.
func BindingRelationship(req CapabilityRequirement) RelationshipType {
	if req.Workload {
		return RelRunsOn
	}
	return RelUses
}

// AddRelationship returns rels with typ to target, added once.
func AddRelationship(rels []Relationship, typ RelationshipType, target string) []Relationship {
	for _, r := range rels {
		if r.Type == typ && r.Target == target {
			return rels
		}
	}
	return append(rels, Relationship{Type: typ, Target: target})
}

// ResolveBySubOperation binds the pending binding id of the plan to the
// resource a sub-operation created, saying so in its reason. It returns
// an EINVALID error when the plan has no such pending binding.
func (p *Plan) ResolveBySubOperation(id string, r *Resource, capability, child string) (*ResourceBinding, error) {
	b := p.Binding(id)
	if b == nil {
		return nil, Errorf(EINVALID, "plan %s has no binding %s", GlobalID(KindPlan, p.ID), id)
	}
	if b.Status == BindingResolved && b.Provider != nil && b.Provider.ResourceKey == r.Key() {
		return b, nil // already resolved to it (a repeat after a restart)
	}
	if b.Status != BindingPendingSubOperation {
		return nil, Errorf(EINVALID, "binding %s is %s, not waiting for a sub-operation", id, b.Status)
	}
	scenario := ""
	if b.SubOperation != nil {
		scenario = " of " + b.SubOperation.Scenario
	}
	b.Status = BindingResolved
	b.Provider = &BoundProvider{ResourceID: r.ID, ResourceKey: r.Key(), Capability: capability}
	b.Reason = "created by sub-operation " + OperationGID(child) + scenario + ": " + r.Key() + " provides " + capability
	return b, nil
}

// CheckAction checks that action is one the resource type typ allows
// (EINVALID naming the allowed ones otherwise). A type no installed pack
// declares sets no limit.
func CheckAction(types []*ResourceType, typ, action string) error {
	for _, t := range types {
		if t.Key != typ || len(t.AllowedActions) == 0 {
			continue
		}
		if !slices.Contains(t.AllowedActions, action) {
			return Errorf(EINVALID, "resource type %s does not allow %s (allowed: %s)", typ, action, strings.Join(t.AllowedActions, ", "))
		}
	}
	return nil
}

// FollowEnd moves an operation's intent and plan to the statuses its end
// (outcome) asks (FollowOperation). An intent still planned (started
// before intents followed their operations) passes through executing.
// It reports what moved; what cannot move legally is left as it is, with
// the reason, for the caller to record.
func FollowEnd(in *Intent, plan *Plan, outcome OperationStatus) (intentMoved, planMoved bool, notes []string) {
	inStatus, planStatus := FollowOperation(outcome)
	if in != nil {
		err := error(nil)
		if in.Status == IntentPlanned {
			err = in.Move(IntentExecuting)
		}
		if err == nil {
			err = in.Move(inStatus)
		}
		if err != nil {
			notes = append(notes, Named("intent", in.ID)+": "+ErrorMessage(err))
		} else {
			intentMoved = true
		}
	}
	if plan != nil {
		if err := plan.Move(planStatus); err != nil {
			notes = append(notes, Named("plan", plan.ID)+": "+ErrorMessage(err))
		} else {
			planMoved = true
		}
	}
	return intentMoved, planMoved, notes
}

// IntentPlanReader reads what an operation's end moves besides itself.
type IntentPlanReader interface {
	GetIntent(ctx context.Context, org, id string) (*Intent, error)
	GetPlan(ctx context.Context, org, id string) (*Plan, error)
}

// FollowInto adds to ch, a change that ends its operation, the
// operation's intent and plan (read from r) moved as the end asks
// (FollowEnd), to commit with it; what cannot move is said in a
// follow.skipped event by actor. It returns the plan as read.
func FollowInto(ctx context.Context, r IntentPlanReader, org string, ch *OperationChange, actor string) (*Plan, error) {
	op := ch.Operation
	in, err := r.GetIntent(ctx, org, op.IntentID)
	if err != nil {
		return nil, err
	}
	plan, err := r.GetPlan(ctx, org, op.PlanID)
	if err != nil {
		return nil, err
	}
	intentMoved, planMoved, notes := FollowEnd(in, plan, op.Status)
	if intentMoved {
		ch.Intent = in
	}
	if planMoved {
		ch.Plan = plan
	}
	for _, n := range notes { // moved by someone else meanwhile: say so, never hold the end up
		ch.Events = append(ch.Events, OperationEvent{Type: "follow.skipped", Actor: actor, Payload: map[string]any{"reason": n}})
	}
	return plan, nil
}
