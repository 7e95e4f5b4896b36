package capstan_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestTargetOf(t *testing.T) {
	in := func(l capstan.LifecycleStatus) *capstan.Resource {
		return &capstan.Resource{Type: "tempo.instance", Name: "prod-tempo", LifecycleStatus: l}
	}
	const key = "tempo.instance/prod-tempo"
	for _, tt := range []struct {
		name   string
		action string
		r      *capstan.Resource
		effect capstan.TargetEffect
		says   string
	}{
		{"install of nothing creates", "install", nil, capstan.TargetCreate, "creates tempo.instance/prod-tempo"},
		{"install of a deleted one creates again", "install", in(capstan.LifecycleDeleted), capstan.TargetCreate, "creates tempo.instance/prod-tempo again (it was deleted)"},
		{"install of an active one reapplies", "install", in(capstan.LifecycleActive), capstan.TargetReapply,
			"tempo.instance/prod-tempo exists (active): this install runs its scenario again on it, in place (updating until it ends); it creates no second one"},
		{"create of a failed one reapplies", "create", in(capstan.LifecycleFailed), capstan.TargetReapply,
			"tempo.instance/prod-tempo exists (failed): this create runs its scenario again on it, in place (provisioning until it ends); it creates no second one"},
		{"upgrade changes", "upgrade", in(capstan.LifecycleActive), capstan.TargetChange, "changes tempo.instance/prod-tempo (active, updating until it ends)"},
		{"delete deletes", "delete", in(capstan.LifecycleDegraded), capstan.TargetDelete, "deletes tempo.instance/prod-tempo (degraded now)"},
		{"upgrade of nothing is refused", "upgrade", nil, capstan.TargetRefused, "tempo.instance/prod-tempo does not exist: a upgrade operation needs an existing resource"},
		{"install while repairing is refused", "install", in(capstan.LifecycleRepairing), capstan.TargetRefused, "tempo.instance/prod-tempo is repairing: a repairing resource cannot take a install operation"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := capstan.TargetOf(tt.action, key, tt.r)
			require.Equal(t, tt.effect, got.Effect)
			require.Equal(t, tt.says, got.Description)
			require.Equal(t, key, got.Key)
		})
	}
}
