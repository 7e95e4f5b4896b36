package assess_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/assess"
)

func TestAssess(t *testing.T) {
	desired := map[string]any{"config_sha256": "aaa", "version": "1.0.0", "replicas": 3}
	passed := func(probe, field string, v any) assess.Observation {
		return assess.Observation{Probe: probe, Field: field, Result: capstan.EvidencePassed, Value: v}
	}
	live := func(probe, result string) assess.Observation {
		return assess.Observation{Probe: probe, Result: result}
	}
	for _, c := range []struct {
		name   string
		obs    []assess.Observation
		ignore []string
		health capstan.HealthStatus
		diff   map[string]assess.Change
		reason string
	}{
		{"nothing observed", nil, nil, capstan.HealthUnknown, nil, "no observe probe"},
		{"all as desired", []assess.Observation{passed("config", "config_sha256", "aaa"), passed("version", "version", "1.0.0"), live("running", capstan.EvidencePassed)}, nil,
			capstan.HealthHealthy, nil, "every observe probe passed"},
		{"a config edited by hand", []assess.Observation{passed("config", "config_sha256", "bbb"), live("running", capstan.EvidencePassed)}, nil,
			capstan.HealthDrifted, map[string]assess.Change{"config_sha256": {Desired: "aaa", Observed: "bbb"}}, "drifted: config_sha256"},
		{"a file gone", []assess.Observation{{Probe: "config", Field: "config_sha256", Result: capstan.EvidenceFailed}}, nil,
			capstan.HealthDrifted, map[string]assess.Change{"config_sha256": {Desired: "aaa", Observed: nil}}, "drifted"},
		{"numbers compare by value", []assess.Observation{passed("replicas", "replicas", float64(3))}, nil, capstan.HealthHealthy, nil, "passed"},
		{"another owner's field is ignored", []assess.Observation{passed("replicas", "replicas", 5)}, []string{"replicas"}, capstan.HealthHealthy, nil, "passed"},
		{"a glob ignores a family", []assess.Observation{passed("replicas", "replicas", 5)}, []string{"repl*"}, capstan.HealthHealthy, nil, "passed"},
		{"a field nobody desired is not drift", []assess.Observation{passed("extra", "uptime", 12)}, nil, capstan.HealthHealthy, nil, "passed"},
		{"a process down", []assess.Observation{passed("config", "config_sha256", "aaa"), live("running", capstan.EvidenceFailed)}, nil,
			capstan.HealthDegraded, nil, "failing: running"},
		{"drift and a process down: drift first, both said", []assess.Observation{passed("config", "config_sha256", "bbb"), live("running", capstan.EvidenceFailed)}, nil,
			capstan.HealthDrifted, map[string]assess.Change{"config_sha256": {Desired: "aaa", Observed: "bbb"}}, "failing: running"},
		{"unreachable beats everything", []assess.Observation{passed("config", "config_sha256", "bbb"), {Probe: "port", Unreachable: true}}, nil,
			capstan.HealthUnreachable, nil, "could not be reached (port)"},
		{"inconclusive", []assess.Observation{live("maybe", capstan.EvidenceInconclusive)}, nil, capstan.HealthUnknown, nil, "inconclusive: maybe"},
		{"an object's field changed by another manager", []assess.Observation{{Probe: "objects", Result: capstan.EvidencePassed,
			Drift: map[string]assess.Change{"Deployment shop/web spec.replicas": {Desired: 2, Observed: 5, ChangedBy: "kubectl"}}}}, nil,
			capstan.HealthDrifted, map[string]assess.Change{"Deployment shop/web spec.replicas": {Desired: 2, Observed: 5, ChangedBy: "kubectl"}}, "drifted: Deployment shop/web spec.replicas"},
		{"an object's drift can be ignored", []assess.Observation{{Probe: "objects", Result: capstan.EvidencePassed,
			Drift: map[string]assess.Change{"Deployment shop/web spec.replicas": {Desired: 2, Observed: 5}}}}, []string{"Deployment */web spec.replicas"}, capstan.HealthHealthy, nil, "passed"},
		{"objects not ready, none changed", []assess.Observation{{Probe: "objects", Result: capstan.EvidenceFailed}}, nil, capstan.HealthDegraded, nil, "failing: objects"},
		{"drift from an unreachable cluster is not believed", []assess.Observation{{Probe: "objects", Unreachable: true,
			Drift: map[string]assess.Change{"Deployment shop/web": {Desired: "present", Observed: "missing"}}}}, nil, capstan.HealthUnreachable, nil, "could not be reached"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := assess.Assess(desired, c.obs, c.ignore)
			require.Equal(t, c.health, v.Health)
			if c.diff == nil {
				require.Empty(t, v.Diff)
			} else {
				require.Equal(t, c.diff, v.Diff)
			}
			require.Contains(t, v.Reason, c.reason)
		})
	}
}
