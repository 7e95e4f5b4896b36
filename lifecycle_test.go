package capstan

import "testing"

func TestChangeLifecycle(t *testing.T) {
	cases := []struct {
		action  string
		current LifecycleStatus
		found   bool
		want    LifecycleStatus
		code    string
	}{
		{"install", "", false, LifecycleProvisioning, ""},
		{"upgrade", "", false, "", ENOTFOUND},
		{"install", LifecyclePlanned, true, LifecycleProvisioning, ""},
		{"install", LifecycleFailed, true, LifecycleProvisioning, ""},
		{"install", LifecycleActive, true, LifecycleUpdating, ""},
		{"upgrade", LifecycleActive, true, LifecycleUpdating, ""},
		{"upgrade", LifecycleDegraded, true, LifecycleUpdating, ""},
		{"repair", LifecycleDegraded, true, LifecycleRepairing, ""},
		{"upgrade", LifecycleFailed, true, LifecycleRepairing, ""},
		{"uninstall", LifecycleActive, true, LifecycleDeleting, ""},
		{"upgrade", LifecycleDeleted, true, "", EINVALID},
		{"upgrade", LifecycleProvisioning, true, "", EINVALID},
	}
	for _, c := range cases {
		got, err := ChangeLifecycle(c.action, c.current, c.found)
		if got != c.want || ErrorCode(err) != c.code && !(c.code == EINVALID && err != nil) {
			t.Errorf("ChangeLifecycle(%s, %q, %v) = %q, %v; want %q, %s", c.action, c.current, c.found, got, err, c.want, c.code)
		}
	}
}

func TestEndLifecycle(t *testing.T) {
	cases := []struct {
		changing LifecycleStatus
		outcome  OperationStatus
		want     LifecycleStatus
		health   HealthStatus
	}{
		{LifecycleProvisioning, OperationSucceeded, LifecycleActive, HealthHealthy},
		{LifecycleProvisioning, OperationFailed, LifecycleFailed, HealthUnhealthy},
		{LifecycleProvisioning, OperationRolledBack, LifecycleFailed, HealthUnhealthy},
		{LifecycleProvisioning, OperationCancelled, LifecycleFailed, HealthUnhealthy},
		{LifecycleUpdating, OperationSucceeded, LifecycleActive, HealthHealthy},
		{LifecycleUpdating, OperationFailed, LifecycleDegraded, HealthDegraded},
		{LifecycleUpdating, OperationRolledBack, LifecycleActive, HealthUnknown},
		{LifecycleRepairing, OperationCancelled, LifecycleDegraded, HealthDegraded},
		{LifecycleDeleting, OperationSucceeded, LifecycleDeleted, HealthUnknown},
		{LifecycleDeleting, OperationFailed, LifecycleFailed, HealthUnhealthy},
	}
	for _, c := range cases {
		got, health := EndLifecycle(c.changing, c.outcome)
		if got != c.want || health != c.health {
			t.Errorf("EndLifecycle(%s, %s) = %s, %s; want %s, %s", c.changing, c.outcome, got, health, c.want, c.health)
		}
		if err := LifecycleStatuses.Check(c.changing, got); err != nil && got != c.changing {
			t.Errorf("EndLifecycle(%s, %s) = %s is not a legal move: %v", c.changing, c.outcome, got, err)
		}
	}
}
