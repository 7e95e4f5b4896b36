package observe_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/observe"
)

func TestDue(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	active := func(mut func(r *capstan.Resource)) *capstan.Resource {
		r := &capstan.Resource{Meta: capstan.Meta{ID: "r1", UpdatedAt: t0}, LifecycleStatus: capstan.LifecycleActive}
		if mut != nil {
			mut(r)
		}
		return r
	}
	assessedAt := func(at time.Time) func(r *capstan.Resource) {
		return func(r *capstan.Resource) { r.Assessment = &capstan.Assessment{At: at, Health: capstan.HealthHealthy} }
	}
	for _, c := range []struct {
		name string
		r    *capstan.Resource
		now  time.Time
		want bool
	}{
		{"never assessed, written just now", active(nil), t0, true},
		{"assessed a minute ago, 5m interval", active(assessedAt(t0)), t0.Add(time.Minute), false},
		{"assessed an interval ago (no jitter)", active(assessedAt(t0)), t0.Add(5 * time.Minute), true},
		{"paused", active(func(r *capstan.Resource) { r.AssessmentPaused = &capstan.AssessmentPause{By: "alice"} }), t0.Add(time.Hour), false},
		{"an operation changes it", active(func(r *capstan.Resource) { r.ActiveOperationID = "op1" }), t0.Add(time.Hour), false},
		{"planned: nothing built", active(func(r *capstan.Resource) { r.LifecycleStatus = capstan.LifecyclePlanned }), t0.Add(time.Hour), false},
		{"deleted", active(func(r *capstan.Resource) { r.LifecycleStatus = capstan.LifecycleDeleted }), t0.Add(time.Hour), false},
		{"degraded is assessed", active(func(r *capstan.Resource) { r.LifecycleStatus = capstan.LifecycleDegraded }), t0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, observe.Due(c.r, 5*time.Minute, 0, c.now))
		})
	}
}

// TestDueSpreadsResources: with jitter, resources written at the same
// instant come due at different times within the jitter's share of the
// interval, each at the same place every round.
func TestDueSpreadsResources(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	interval, jitter := 10*time.Minute, 0.5
	firstDue := map[time.Duration]int{}
	for i := range 200 {
		r := &capstan.Resource{Meta: capstan.Meta{ID: "r" + string(rune('a'+i%26)) + string(rune('a'+i/26))}, LifecycleStatus: capstan.LifecycleActive,
			Assessment: &capstan.Assessment{At: t0}}
		var due time.Duration
		for d := time.Duration(0); d <= interval*2; d += time.Minute {
			if observe.Due(r, interval, jitter, t0.Add(d)) {
				due = d
				break
			}
		}
		require.GreaterOrEqual(t, due, interval, "never before its interval")
		require.LessOrEqual(t, due, interval+time.Duration(jitter*float64(interval))+time.Minute, "within the jitter")
		firstDue[due]++
	}
	require.Greater(t, len(firstDue), 3, "spread over several minutes: %v", firstDue)
}
