package capstan

import "fmt"

// TargetEffect is what an operation does to the resource its intent
// names, as its plan says before it starts (PlanTarget).
type TargetEffect string

const (
	// TargetCreate: the resource does not exist (or was deleted); the
	// operation creates it.
	TargetCreate TargetEffect = "CREATE"
	// TargetReapply: a create or install of a resource that exists runs
	// its scenario again on it, in place; no second resource is made.
	TargetReapply TargetEffect = "REAPPLY"
	// TargetChange: the operation changes the existing resource.
	TargetChange TargetEffect = "CHANGE"
	// TargetDelete: the operation takes the resource away.
	TargetDelete TargetEffect = "DELETE"
	// TargetRefused: the resource's lifecycle refuses the action; the
	// operation would fail at its first step.
	TargetRefused TargetEffect = "REFUSED"
)

// PlanTarget says what an operation of a plan would do to its intent's
// resource as it stands now.
type PlanTarget struct {
	Key string
	// Resource is the resource now, nil when it does not exist.
	Resource    *Resource
	Effect      TargetEffect
	Description string
}

// TargetOf is what an operation with action does to the resource with
// key, found as r (nil: there is none), in one line for people. The
// lifecycle it foresees is ChangeLifecycle's, which the executor applies.
func TargetOf(action, key string, r *Resource) PlanTarget {
	t := PlanTarget{Key: key, Resource: r}
	found := r != nil && r.LifecycleStatus != LifecycleDeleted
	var current LifecycleStatus
	if r != nil {
		current = r.LifecycleStatus
	}
	to, err := ChangeLifecycle(action, current, r != nil)
	switch {
	case err != nil:
		t.Effect = TargetRefused
		if r == nil {
			t.Description = fmt.Sprintf("%s does not exist: %s", key, ErrorMessage(err))
		} else {
			t.Description = fmt.Sprintf("%s is %s: %s", key, current, ErrorMessage(err))
		}
	case !found:
		t.Effect = TargetCreate
		t.Description = fmt.Sprintf("creates %s", key)
		if r != nil {
			t.Description = fmt.Sprintf("creates %s again (it was deleted)", key)
		}
	case DeletesResource(action):
		t.Effect = TargetDelete
		t.Description = fmt.Sprintf("deletes %s (%s now)", key, current)
	case CreatesResource(action):
		t.Effect = TargetReapply
		t.Description = fmt.Sprintf("%s exists (%s): this %s runs its scenario again on it, in place (%s until it ends); it creates no second one",
			key, current, action, to)
	default:
		t.Effect = TargetChange
		t.Description = fmt.Sprintf("changes %s (%s, %s until it ends)", key, current, to)
	}
	return t
}
