package capstan

// ChangeLifecycle returns the lifecycle status a resource takes while an
// operation with action changes it: installs provision, deletes delete,
// repairs repair, anything else updates. Found is false for a resource
// that does not exist yet (only an install creates one).
func ChangeLifecycle(action string, current LifecycleStatus, found bool) (LifecycleStatus, error) {
	if !found {
		if action != "install" {
			return "", Errorf(ENOTFOUND, "a %s operation needs an existing resource", action)
		}
		return LifecycleProvisioning, nil
	}
	var to LifecycleStatus
	switch {
	case action == "uninstall" || action == "delete":
		to = LifecycleDeleting
	case action == "repair":
		to = LifecycleRepairing
	case current == LifecyclePlanned || (current == LifecycleFailed && action == "install"):
		to = LifecycleProvisioning
	case current == LifecycleFailed:
		to = LifecycleRepairing
	default:
		to = LifecycleUpdating
	}
	if err := LifecycleStatuses.Check(current, to); err != nil {
		return "", err
	}
	return to, nil
}

// EndLifecycle returns the lifecycle status and health a resource takes
// when the operation changing it (from status changing) ends with outcome.
// A failed or cancelled install leaves a failed resource; a failed change
// of a working resource leaves it degraded; a rolled-back change restores it.
func EndLifecycle(changing LifecycleStatus, outcome OperationStatus) (LifecycleStatus, HealthStatus) {
	if outcome == OperationSucceeded {
		if changing == LifecycleDeleting {
			return LifecycleDeleted, HealthUnknown
		}
		return LifecycleActive, HealthHealthy
	}
	switch changing {
	case LifecycleProvisioning, LifecycleDeleting:
		return LifecycleFailed, HealthUnhealthy
	case LifecycleUpdating, LifecycleRepairing:
		if outcome == OperationRolledBack {
			return LifecycleActive, HealthUnknown
		}
		return LifecycleDegraded, HealthDegraded
	}
	return changing, HealthUnknown
}
