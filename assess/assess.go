// Package assess decides a resource's health from a health assessment:
// what its observe probes saw on the real host, against the desired state
// its last operation set (seed §4.1, open question 7). It is a pure
// function; running the probes and recording the verdict are the
// caller's.
package assess

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/capstan-dev/capstan"
)

// An Observation is one observe probe's outcome.
type Observation struct {
	// Probe names it; Field is the desired-state field it observes (""
	// for a check of liveness only: a process runs, a port answers).
	Probe, Field string
	// Result is the probe's verdict (passed, failed, inconclusive).
	Result string
	// Value is what it observed for Field.
	Value any
	// Unreachable says the host could not be reached at all.
	Unreachable bool
	// Drift are the fields the probe itself found changed, by name (a
	// kubernetes drift probe's: an applied object's fields): drift
	// whatever its Result, unless ignored.
	Drift map[string]Change
}

// A Change is one field whose observed value is not the desired one.
type Change struct {
	Desired  any `json:"desired"`
	Observed any `json:"observed"`
	// ChangedBy is who changed it, when the probe could say.
	ChangedBy string `json:"changed_by,omitempty"`
}

// Verdict is an assessment's outcome.
type Verdict struct {
	Health capstan.HealthStatus
	// Diff holds the drifted fields (ignored ones left out).
	Diff map[string]Change
	// Reason says why, in one line.
	Reason string
}

// Assess decides health: unreachable when the host could not be reached;
// drifted when a field differs from its desired value (fields matching
// an ignore pattern — another owner's, as an autoscaler's replicas — are
// not compared); degraded when a liveness probe failed; healthy when
// every probe passed; unknown otherwise (an inconclusive probe, or no
// probe at all). Drift comes before degradation: it is the cause to
// repair first, and the reason names both.
func Assess(desired map[string]any, obs []Observation, ignore []string) Verdict {
	if len(obs) == 0 {
		return Verdict{Health: capstan.HealthUnknown, Reason: "no observe probe"}
	}
	var unreachable, failed, inconclusive []string
	diff := map[string]Change{}
	for _, o := range obs {
		if o.Unreachable {
			unreachable = append(unreachable, o.Probe)
			continue
		}
		for field, ch := range o.Drift {
			if !ignored(field, ignore) {
				diff[field] = ch
			}
		}
		switch {
		case o.Field != "":
			want, declared := desired[o.Field]
			if !declared || ignored(o.Field, ignore) {
				break
			}
			if o.Result != capstan.EvidencePassed && o.Value == nil {
				diff[o.Field] = Change{Desired: want, Observed: nil}
			} else if fmt.Sprint(want) != fmt.Sprint(o.Value) {
				diff[o.Field] = Change{Desired: want, Observed: o.Value}
			}
			continue
		}
		switch o.Result {
		case capstan.EvidencePassed:
		case capstan.EvidenceFailed:
			failed = append(failed, o.Probe)
		default:
			inconclusive = append(inconclusive, o.Probe)
		}
	}
	switch {
	case len(unreachable) > 0:
		return Verdict{Health: capstan.HealthUnreachable, Reason: "the host could not be reached (" + strings.Join(unreachable, ", ") + ")"}
	case len(diff) > 0:
		reason := "drifted: " + strings.Join(slices.Sorted(maps.Keys(diff)), ", ") + " differ from the desired state"
		if len(failed) > 0 {
			reason += "; failing: " + strings.Join(failed, ", ")
		}
		return Verdict{Health: capstan.HealthDrifted, Diff: diff, Reason: reason}
	case len(failed) > 0:
		return Verdict{Health: capstan.HealthDegraded, Reason: "failing: " + strings.Join(failed, ", ")}
	case len(inconclusive) > 0:
		return Verdict{Health: capstan.HealthUnknown, Reason: "inconclusive: " + strings.Join(inconclusive, ", ")}
	}
	return Verdict{Health: capstan.HealthHealthy, Reason: "every observe probe passed and matches the desired state"}
}

// ignored reports whether field matches one of the ignore patterns
// (path.Match, so spec.* ignores spec.replicas).
func ignored(field string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		ok, _ := path.Match(p, field)
		return ok || p == field
	})
}
