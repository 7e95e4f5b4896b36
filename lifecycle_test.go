package capstan

import (
	"fmt"
	"testing"
	"time"
)

var (
	allLifecycles = []LifecycleStatus{LifecyclePlanned, LifecycleProvisioning, LifecycleActive, LifecycleUpdating,
		LifecycleDegraded, LifecycleRepairing, LifecycleDeleting, LifecycleDeleted, LifecycleFailed}
	lifecycleActions = []string{"create", "install", "upgrade", "add_node", "remove_node", "repair", "delete"}
	endings          = []OperationStatus{OperationSucceeded, OperationFailed, OperationCancelled, OperationRolledBack}
)

func TestChangeLifecycle(t *testing.T) {
	cases := []struct {
		action  string
		current LifecycleStatus
		found   bool
		want    LifecycleStatus
		code    string
	}{
		{"install", "", false, LifecycleProvisioning, ""},
		{"create", "", false, LifecycleProvisioning, ""}, // a create creates its resource
		{"upgrade", "", false, "", ENOTFOUND},
		{"install", LifecyclePlanned, true, LifecycleProvisioning, ""},
		{"create", LifecycleFailed, true, LifecycleProvisioning, ""},
		{"create", LifecycleDeleted, true, LifecycleProvisioning, ""},
		{"create", LifecycleProvisioning, true, LifecycleProvisioning, ""}, // a catalog row being provisioned is taken over
		{"upgrade", LifecycleProvisioning, true, LifecycleProvisioning, ""},
		{"install", LifecycleActive, true, LifecycleUpdating, ""},
		{"upgrade", LifecycleActive, true, LifecycleUpdating, ""},
		{"add_node", LifecycleDegraded, true, LifecycleUpdating, ""},
		{"upgrade", LifecycleUpdating, true, LifecycleUpdating, ""},
		{"repair", LifecycleDegraded, true, LifecycleRepairing, ""},
		{"repair", LifecycleFailed, true, LifecycleRepairing, ""},
		{"repair", LifecycleUpdating, true, LifecycleRepairing, ""},
		{"repair", LifecycleRepairing, true, LifecycleRepairing, ""},
		{"upgrade", LifecycleFailed, true, LifecycleRepairing, ""},
		{"delete", LifecycleActive, true, LifecycleDeleting, ""},
		{"delete", LifecycleProvisioning, true, LifecycleDeleting, ""},
		{"uninstall", LifecycleFailed, true, LifecycleDeleting, ""},
		{"upgrade", LifecycleDeleted, true, "", EINVALID},
		{"upgrade", LifecyclePlanned, true, "", EINVALID},
		{"repair", LifecyclePlanned, true, "", EINVALID},
		{"upgrade", LifecycleDeleting, true, "", EINVALID},
		{"upgrade", LifecycleRepairing, true, "", EINVALID},
		{"delete", LifecycleDeleted, true, "", EINVALID},
	}
	for _, c := range cases {
		got, err := ChangeLifecycle(c.action, c.current, c.found)
		if got != c.want || ErrorCode(err) != c.code {
			t.Errorf("ChangeLifecycle(%s, %q, %v) = %q, %v; want %q, %q", c.action, c.current, c.found, got, err, c.want, c.code)
		}
	}
}

// TestNoLifecycleDeadEnd: from every status some action can begin, and
// every status but deleted can be deleted or repaired on.
func TestNoLifecycleDeadEnd(t *testing.T) {
	for _, from := range allLifecycles {
		var ok []string
		for _, a := range lifecycleActions {
			if _, err := ChangeLifecycle(a, from, true); err == nil {
				ok = append(ok, a)
			}
		}
		if len(ok) == 0 {
			t.Errorf("a %s resource takes no action", from)
		}
	}
}

func TestEndLifecycle(t *testing.T) {
	active := ResourceState{Existed: true, Lifecycle: LifecycleActive, Health: HealthHealthy}
	degraded := ResourceState{Existed: true, Lifecycle: LifecycleDegraded, Health: HealthDegraded}
	none := ResourceState{}
	cases := []struct {
		changing LifecycleStatus
		before   ResourceState
		outcome  OperationStatus
		changed  bool
		want     LifecycleStatus
		health   HealthStatus
	}{
		{LifecycleProvisioning, none, OperationSucceeded, true, LifecycleActive, HealthHealthy},
		{LifecycleProvisioning, none, OperationFailed, true, LifecycleFailed, HealthUnhealthy},
		{LifecycleProvisioning, none, OperationCancelled, true, LifecycleFailed, HealthUnhealthy},
		{LifecycleProvisioning, none, OperationCancelled, false, LifecyclePlanned, HealthUnknown},
		{LifecycleProvisioning, none, OperationRolledBack, true, LifecyclePlanned, HealthUnknown},
		{LifecycleUpdating, active, OperationSucceeded, true, LifecycleActive, HealthHealthy},
		{LifecycleUpdating, active, OperationFailed, true, LifecycleDegraded, HealthDegraded},
		{LifecycleUpdating, active, OperationFailed, false, LifecycleActive, HealthHealthy},
		{LifecycleUpdating, active, OperationRolledBack, true, LifecycleActive, HealthUnknown},
		{LifecycleRepairing, degraded, OperationCancelled, false, LifecycleDegraded, HealthDegraded}, // the cancelled repair
		{LifecycleRepairing, degraded, OperationCancelled, true, LifecycleDegraded, HealthDegraded},
		{LifecycleRepairing, degraded, OperationSucceeded, true, LifecycleActive, HealthHealthy},
		{LifecycleDeleting, active, OperationSucceeded, true, LifecycleDeleted, HealthUnknown},
		{LifecycleDeleting, active, OperationFailed, true, LifecycleFailed, HealthUnhealthy},
		{LifecycleDeleting, active, OperationCancelled, false, LifecycleActive, HealthHealthy},
		{LifecycleRepairing, ResourceState{Existed: true, Lifecycle: LifecycleFailed, Health: HealthUnhealthy}, OperationFailed, true, LifecycleFailed, HealthUnhealthy}, // no improvement
	}
	for _, c := range cases {
		got, health := EndLifecycle(c.changing, c.before, c.outcome, c.changed)
		if got != c.want || health != c.health {
			t.Errorf("EndLifecycle(%s, %+v, %s, %v) = %s, %s; want %s, %s", c.changing, c.before, c.outcome, c.changed, got, health, c.want, c.health)
		}
	}
}

// TestEveryChangeIsLegal runs every action from every status to every
// outcome, with and without work done: each begin and end is a legal move
// of the state machine (or stays), an operation that changed nothing
// leaves the resource as it found it, and a success leaves it active
// (deleted after a delete).
func TestEveryChangeIsLegal(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, action := range lifecycleActions {
		for _, from := range append([]LifecycleStatus{""}, allLifecycles...) {
			for _, outcome := range endings {
				for _, changed := range []bool{false, true} {
					name := fmt.Sprintf("%s from %q, %s, changed %v", action, from, outcome, changed)
					op := &Operation{Meta: Meta{ID: "op1"}, Action: action, ResourceKey: "minio.instance/m1", Status: outcome}
					var stored *Resource
					if from != "" {
						stored = &Resource{Type: "minio.instance", Name: "m1", LifecycleStatus: from, HealthStatus: HealthDegraded}
					}
					fresh := &Resource{Type: "minio.instance", Name: "m1"}
					begun, before, err := BeginChange(op, stored, fresh, false)
					if err != nil {
						continue // refused at the start, with its reason: nothing moved
					}
					if from != "" && begun.LifecycleStatus != from {
						if err := LifecycleStatuses.Check(from, begun.LifecycleStatus); err != nil {
							t.Errorf("%s: begin: %v", name, err)
						}
					}
					op.ResourceBefore = &before
					ended := EndChange(begun, op, changed, nil, now)
					if ended == nil {
						t.Fatalf("%s: the operation's own resource was not concluded", name)
					}
					if ended.LifecycleStatus != begun.LifecycleStatus {
						if err := LifecycleStatuses.Check(begun.LifecycleStatus, ended.LifecycleStatus); err != nil {
							t.Errorf("%s: end: %v", name, err)
						}
					}
					switch {
					case outcome == OperationSucceeded && DeletesResource(action):
						expect(t, name, ended, LifecycleDeleted)
					case outcome == OperationSucceeded:
						expect(t, name, ended, LifecycleActive)
					case !changed && from == "":
						expect(t, name, ended, LifecyclePlanned)
					case !changed:
						expect(t, name, ended, from)
						if ended.HealthStatus != HealthDegraded {
							t.Errorf("%s: health %s, want the degraded it was found in", name, ended.HealthStatus)
						}
					}
					if ended.ActiveOperationID != "" || ended.LastOperationID != "op1" {
						t.Errorf("%s: points at active %q, last %q", name, ended.ActiveOperationID, ended.LastOperationID)
					}
				}
			}
		}
	}
}

func expect(t *testing.T, name string, r *Resource, want LifecycleStatus) {
	t.Helper()
	if r.LifecycleStatus != want {
		t.Errorf("%s: ended %s, want %s", name, r.LifecycleStatus, want)
	}
}

func TestBeginChangeRefusesABusyResource(t *testing.T) {
	stored := &Resource{Type: "minio.instance", Name: "m1", LifecycleStatus: LifecycleUpdating, ActiveOperationID: "other"}
	_, _, err := BeginChange(&Operation{Meta: Meta{ID: "op1"}, Action: "upgrade"}, stored, nil, true)
	if ErrorCode(err) != ECONFLICT {
		t.Fatalf("got %v, want a conflict", err)
	}
}

func TestFollowOperation(t *testing.T) {
	for outcome, want := range map[OperationStatus][2]string{
		OperationSucceeded: {"completed", "completed"}, OperationFailed: {"failed", "failed"},
		OperationCancelled: {"cancelled", "cancelled"}, OperationRolledBack: {"failed", "failed"},
	} {
		in, plan := FollowOperation(outcome)
		if string(in) != want[0] || string(plan) != want[1] {
			t.Errorf("FollowOperation(%s) = %s, %s; want %v", outcome, in, plan, want)
		}
		if err := IntentStatuses.Check(IntentExecuting, in); err != nil {
			t.Error(err)
		}
		if err := PlanStatuses.Check(PlanRunning, plan); err != nil {
			t.Error(err)
		}
	}
}

func TestCheckAction(t *testing.T) {
	types := []*ResourceType{{Key: "kubernetes.cluster", AllowedActions: []string{"create", "repair"}}, {Key: "free"}}
	for _, c := range []struct {
		typ, action, code string
	}{
		{"kubernetes.cluster", "create", ""},
		{"kubernetes.cluster", "repair", ""},
		{"kubernetes.cluster", "upgrade", EINVALID},
		{"free", "anything", ""},       // declares no actions: no limit
		{"undeclared", "anything", ""}, // no pack declares it
	} {
		if got := ErrorCode(CheckAction(types, c.typ, c.action)); got != c.code {
			t.Errorf("CheckAction(%s, %s) = %q, want %q", c.typ, c.action, got, c.code)
		}
	}
}

// TestEndChangeOfAnOperationBegunBeforeResourceBefore: an operation begun
// by an older version kept no ResourceBefore; its end assumes work ran on
// a working resource, as ends used to.
func TestEndChangeOfAnOperationBegunBeforeResourceBefore(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for changing, want := range map[LifecycleStatus]LifecycleStatus{
		LifecycleUpdating: LifecycleActive, LifecycleRepairing: LifecycleActive, LifecycleProvisioning: LifecyclePlanned,
	} {
		r := &Resource{Type: "minio.instance", Name: "m1", LifecycleStatus: changing, ActiveOperationID: "op1"}
		op := &Operation{Meta: Meta{ID: "op1"}, Status: OperationRolledBack}
		ended := EndChange(r, op, false, nil, now)
		if ended.LifecycleStatus != want {
			t.Errorf("rolled back from %s: %s, want %s", changing, ended.LifecycleStatus, want)
		}
		if err := LifecycleStatuses.Check(changing, ended.LifecycleStatus); err != nil {
			t.Error(err)
		}
	}
}

func TestFollowEnd(t *testing.T) {
	in := &Intent{Meta: Meta{ID: "i1"}, Status: IntentPlanned} // started by an older version
	plan := &Plan{Meta: Meta{ID: "p1"}, Status: PlanRunning}
	im, pm, notes := FollowEnd(in, plan, OperationCancelled)
	if !im || !pm || len(notes) > 0 || in.Status != IntentCancelled || plan.Status != PlanCancelled {
		t.Fatalf("FollowEnd = %v %v %v; intent %s, plan %s", im, pm, notes, in.Status, plan.Status)
	}
	done := &Intent{Meta: Meta{ID: "i2"}, Status: IntentCompleted}
	im, _, notes = FollowEnd(done, nil, OperationFailed)
	if im || len(notes) != 1 || done.Status != IntentCompleted {
		t.Fatalf("an intent that ended already is left as it is, with the reason: %v %v %s", im, notes, done.Status)
	}
}
