package capstan_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestObserveSpec(t *testing.T) {
	file := capstan.Probe{Name: "config", Type: "file", Target: "runs_on", Path: "/etc/x.conf", Observes: "config_sha256"}
	for _, c := range []struct {
		name    string
		spec    capstan.ObserveSpec
		problem string
	}{
		{"a file probe observing a field", capstan.ObserveSpec{Probes: []capstan.Probe{file}}, ""},
		{"an http probe of its own url", capstan.ObserveSpec{Probes: []capstan.Probe{{Name: "h", Type: "http", URL: "https://example.test/health"}}}, ""},
		{"no probe", capstan.ObserveSpec{}, "at least one probe"},
		{"too often", capstan.ObserveSpec{Every: "1s", Probes: []capstan.Probe{file}}, "at least 10s"},
		{"not a duration", capstan.ObserveSpec{Every: "often", Probes: []capstan.Probe{file}}, "not a duration"},
		{"a command probe runs on the control plane", capstan.ObserveSpec{Probes: []capstan.Probe{{Name: "c", Type: "command", Script: "true"}}}, "a command probe"},
		{"a sim probe checks nothing", capstan.ObserveSpec{Probes: []capstan.Probe{{Name: "s", Type: "sim"}}}, "a sim probe"},
		{"a target other than runs_on", capstan.ObserveSpec{Probes: []capstan.Probe{{Name: "p", Type: "tcp", Target: "host", Port: 80}}}, `targets "host"`},
		{"twice the same name", capstan.ObserveSpec{Probes: []capstan.Probe{file, file}}, "declared twice"},
		{"a tcp probe observes no value", capstan.ObserveSpec{Probes: []capstan.Probe{{Name: "p", Type: "tcp", Target: "runs_on", Port: 80, Observes: "port"}}}, "observes no value"},
		{"a tcp probe without port", capstan.ObserveSpec{Probes: []capstan.Probe{{Name: "p", Type: "tcp", Target: "runs_on"}}}, "needs a target and a port"},
	} {
		t.Run(c.name, func(t *testing.T) {
			typ := capstan.ResourceType{Key: "linux.service", DisplayName: "x", AllowedActions: []string{"install"}, Observe: &c.spec}
			err := typ.Validate()
			if c.problem == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
			require.Contains(t, capstan.ErrorMessage(err)+" "+joinDetails(err), c.problem)
		})
	}
	require.Equal(t, capstan.DefaultObserveEvery, (&capstan.ObserveSpec{}).Interval())
	require.Equal(t, 30*time.Second, (&capstan.ObserveSpec{Every: "30s"}).Interval())
}

func joinDetails(err error) string {
	s := ""
	for _, d := range capstan.ErrorDetails(err) {
		s += d + "; "
	}
	return s
}

func TestUnresolvedDrift(t *testing.T) {
	since := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	drifted := &capstan.Resource{Type: "linux.service", Name: "a", Assessment: &capstan.Assessment{Health: capstan.HealthDrifted, Since: since,
		Diff: []capstan.FieldDrift{{Field: "config_sha256"}, {Field: "running"}}}}
	healthy := &capstan.Resource{Type: "linux.service", Name: "b", Assessment: &capstan.Assessment{Health: capstan.HealthHealthy}}
	unreachable := &capstan.Resource{Type: "linux.service", Name: "c", Assessment: &capstan.Assessment{Health: capstan.HealthUnreachable}}
	repaired := &capstan.Resource{Type: "linux.service", Name: "d", HealthStatus: capstan.HealthHealthy} // an operation cleared its assessment
	require.Equal(t, []string{"linux.service/a drifted (config_sha256, running differ from its desired state, since 2026-12-05T12:00:00Z): repair it (repairResource)"},
		capstan.UnresolvedDrift([]*capstan.Resource{drifted, healthy, unreachable, repaired, nil}))
	require.Empty(t, capstan.UnresolvedDrift(nil))

	plan := &capstan.Plan{Bindings: []capstan.ResourceBinding{
		{Status: capstan.BindingResolved, Provider: &capstan.BoundProvider{ResourceKey: "compute.node/h1"}},
		{Status: capstan.BindingResolved, Provider: &capstan.BoundProvider{ResourceKey: "linux.service/a"}},
		{Status: capstan.BindingResolved, Provider: &capstan.BoundProvider{ResourceKey: "compute.node/h1"}},
		{Status: capstan.BindingUnresolved},
	}}
	require.Equal(t, []string{"test.consumer/x", "compute.node/h1", "linux.service/a"}, capstan.BoundResources(plan, "test.consumer/x"))
	require.Equal(t, []string{"compute.node/h1", "linux.service/a"}, capstan.BoundResources(plan, ""))
	require.Empty(t, capstan.BoundResources(nil, ""))
}

func TestDriftGate(t *testing.T) {
	plan := &capstan.Plan{
		Bindings: []capstan.ResourceBinding{
			{ID: "svc", Status: capstan.BindingResolved, Provider: &capstan.BoundProvider{ResourceKey: "linux.service/a"}},
			{ID: "db", Status: capstan.BindingResolved, Provider: &capstan.BoundProvider{ResourceKey: "postgres.instance/b"}},
		},
		Nodes: []capstan.PlanNode{
			{ID: "prepare", Type: capstan.NodeJob},
			{ID: "migrate", Type: capstan.NodeJob, Requires: []string{"db"}},
			{ID: "deploy", Type: capstan.NodeJob, Requires: []string{"svc", "db"}},
			{ID: "smoke", Type: capstan.NodeJob, Requires: []string{"svc"}},
		},
	}
	for _, c := range []struct {
		name    string
		started []string
		key     string
		want    string // the node the gate goes before; "" none
	}{
		{"before the first node that uses it", nil, "linux.service/a", "deploy"},
		{"a started user is past: the next one", []string{"prepare", "migrate", "deploy"}, "linux.service/a", "smoke"},
		{"every user started", []string{"deploy", "smoke"}, "linux.service/a", ""},
		{"another provider", nil, "postgres.instance/b", "migrate"},
		{"not bound by the plan", nil, "linux.service/z", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			started := map[string]bool{}
			for _, n := range c.started {
				started[n] = true
			}
			ch, ok := capstan.DriftGate(plan, started, c.key, c.key+" drifted")
			require.Equal(t, c.want != "", ok)
			if !ok {
				return
			}
			require.Equal(t, capstan.ChangeInsertBefore, ch.Op)
			require.Equal(t, c.want, ch.Node)
			require.Equal(t, "resolve-drift-"+c.want, ch.NodeID)
			require.Equal(t, capstan.NodeGate, ch.Spec.Type)
			require.True(t, ch.Spec.Gate.NoDrift, "approved only once the drift is resolved")
			require.Equal(t, []string{capstan.RoleSRE}, ch.Spec.Gate.RequiredRoles)
		})
	}
	withGate := *plan
	withGate.Nodes = append(slices.Clone(plan.Nodes), capstan.PlanNode{ID: "resolve-drift-deploy", Type: capstan.NodeGate})
	_, ok := capstan.DriftGate(&withGate, nil, "linux.service/a", "x")
	require.False(t, ok, "a plan holding the gate already gets no second one")
}
