package capstan_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestStateMachines(t *testing.T) {
	type move struct {
		from, to string
		ok       bool
	}
	check := func(t *testing.T, name string, fn func(from, to string) error, moves []move) {
		for _, m := range moves {
			err := fn(m.from, m.to)
			if m.ok {
				require.NoError(t, err, "%s %s -> %s", name, m.from, m.to)
				continue
			}
			require.Error(t, err, "%s %s -> %s must be illegal", name, m.from, m.to)
			require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
		}
	}
	check(t, "intent", func(f, to string) error {
		return capstan.IntentStatuses.Check(capstan.IntentStatus(f), capstan.IntentStatus(to))
	}, []move{
		{"draft", "submitted", true}, {"submitted", "planned", true}, {"planned", "executing", true},
		{"executing", "completed", true}, {"executing", "failed", true}, {"planned", "submitted", true},
		{"draft", "executing", false}, {"completed", "executing", false}, {"cancelled", "draft", false},
		{"submitted", "bogus", false},
	})
	check(t, "plan", func(f, to string) error {
		return capstan.PlanStatuses.Check(capstan.PlanStatus(f), capstan.PlanStatus(to))
	}, []move{
		{"draft", "resolving", true}, {"resolving", "ready", true}, {"resolving", "invalid", true},
		{"ready", "running", true}, {"ready", "approved", true}, {"approved", "running", true},
		{"running", "completed", true}, {"running", "superseded", true}, {"invalid", "ready", true},
		{"invalid", "running", false}, {"completed", "running", false}, {"draft", "ready", false},
	})
	check(t, "operation", func(f, to string) error {
		return capstan.OperationStatuses.Check(capstan.OperationStatus(f), capstan.OperationStatus(to))
	}, []move{
		{"pending", "running", true}, {"running", "waiting", true}, {"waiting", "running", true},
		{"running", "succeeded", true}, {"running", "rolling_back", true}, {"rolling_back", "rolled_back", true},
		{"cancelling", "cancelled", true},
		{"succeeded", "running", false}, {"pending", "succeeded", false}, {"rolled_back", "running", false},
	})
	check(t, "node run", func(f, to string) error {
		return capstan.NodeRunStatuses.Check(capstan.NodeRunStatus(f), capstan.NodeRunStatus(to))
	}, []move{
		{"pending", "ready", true}, {"ready", "running", true}, {"running", "verifying", true},
		{"verifying", "succeeded", true}, {"running", "failed", true}, {"failed", "retrying", true},
		{"retrying", "running", true}, {"ready", "waiting_approval", true}, {"waiting_intervention", "verifying", true},
		{"running", "succeeded", false}, {"waiting_intervention", "succeeded", false}, {"skipped", "running", false},
	})
	check(t, "lifecycle", func(f, to string) error {
		return capstan.LifecycleStatuses.Check(capstan.LifecycleStatus(f), capstan.LifecycleStatus(to))
	}, []move{
		{"planned", "provisioning", true}, {"provisioning", "active", true}, {"active", "updating", true},
		{"active", "degraded", true}, {"degraded", "repairing", true}, {"repairing", "active", true},
		{"active", "deleting", true}, {"deleting", "deleted", true},
		{"deleted", "active", false}, {"planned", "active", false}, {"active", "provisioning", false},
	})
}

// A job run that exits 0 is still not succeeded until verification: the
// node run machine has no running -> succeeded move (invariant 5's shape).
func TestNodeRunCannotSkipVerification(t *testing.T) {
	n := &capstan.OperationNodeRun{Status: capstan.NodeRunning}
	require.Error(t, n.Move(capstan.NodeSucceeded))
	require.NoError(t, n.Move(capstan.NodeVerifying))
	require.NoError(t, n.Move(capstan.NodeSucceeded))
	// Invariant 8: after a manual intervention the node verifies again.
	m := &capstan.OperationNodeRun{Status: capstan.NodeWaitingIntervention}
	require.Error(t, m.Move(capstan.NodeSucceeded))
	require.NoError(t, m.Move(capstan.NodeVerifying))
}

func TestSemver(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.0.0", "1.0.0", 0}, {"1.0.0", "1.0.1", -1}, {"1.10.0", "1.9.0", 1}, {"2.0.0-rc.1", "2.0.0", -1},
		{"2.0.0", "2.0.0-rc.1", 1}, {"0.1.0", "0.0.9", 1},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, capstan.CompareSemver(tt.a, tt.b), "%s vs %s", tt.a, tt.b)
	}
	require.False(t, capstan.ValidSemver("1.0"))
	require.False(t, capstan.ValidSemver("01.0.0"))
	require.True(t, capstan.ValidSemver("1.2.3-beta.1+build.5"))
}
