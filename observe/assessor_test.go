package observe_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/embedded"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/probe"
	"github.com/capstan-dev/capstan/observe"
	"github.com/capstan-dev/capstan/secret"
)

// hostSays is a remote probe that reports what a host printed.
type hostSays string

func (h hostSays) Probe(context.Context, capstan.Probe, *job.Target) (string, map[string]any, []byte) {
	return capstan.EvidencePassed, map[string]any{"exit_code": 0, "note": string(h)}, []byte(h)
}

// maskingSecrets holds the host key and one secret value of the
// organization.
type maskingSecrets struct{ values map[string][]byte }

func (s maskingSecrets) Get(_ context.Context, _, name string) ([]byte, error) {
	return s.values[name], nil
}
func (s maskingSecrets) Put(context.Context, string, string, []byte) error { return nil }
func (s maskingSecrets) Redactor(context.Context, string) (*secret.Redactor, error) {
	return secret.NewRedactor([][]byte{s.values["db-password"]}), nil
}

// TestWhatAHostSaysIsMasked: a host that prints a secret of the
// organization (a probe reading a config file) has it masked everywhere
// the assessment keeps it: the observed state, the diff, the evidence.
func TestWhatAHostSaysIsMasked(t *testing.T) {
	ctx := context.Background()
	store, err := embedded.Open(t.TempDir())
	require.NoError(t, err)
	defer store.Close()
	const password = "correct-horse-battery-staple"
	node := &capstan.Resource{Type: "compute.node", Name: "h1", LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
		ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: job.SSHAccess, Attributes: map[string]any{
			"address": "10.0.0.2", "user": "root", "host_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ+pLwnnC0cXYtKxYG6AUsu8hdH4x8GYNannH9UOjCnF", "private_key": "secret:host-key"}}}}
	svc := &capstan.Resource{Type: "app.service", Name: "a", LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
		DesiredState:  map[string]any{"dsn": "postgres://app@db/app"},
		Relationships: []capstan.Relationship{{Type: capstan.RelRunsOn, Target: "compute.node/h1"}}}
	_, err = store.ImportResources(ctx, "o", []*capstan.Resource{node, svc})
	require.NoError(t, err)
	spec := &capstan.ObserveSpec{Probes: []capstan.Probe{{Name: "dsn", Type: "ssh_command", Target: capstan.ObserveTarget, Script: "cat /etc/app/dsn", Observes: "dsn"}}}
	typed := benchStore{Store: store, types: []*capstan.ResourceType{{Key: "app.service", DisplayName: "App", AllowedActions: []string{"install"}, Observe: spec}}}
	a := &observe.Assessor{Store: typed, Secrets: maskingSecrets{values: map[string][]byte{"host-key": []byte("key"), "db-password": []byte(password)}},
		Prober: probe.Prober{Remote: map[string]job.RemoteProbe{"ssh_command": hostSays("postgres://app:" + password + "@db/app")}}}
	got, err := a.Assess(ctx, "o", "app.service/a", "alice")
	require.NoError(t, err)
	require.Equal(t, capstan.HealthDrifted, got.HealthStatus, "%+v", got.Assessment)
	kept, err := json.Marshal(got)
	require.NoError(t, err)
	require.NotContains(t, string(kept), password, "the secret is masked wherever the assessment keeps it")
	require.Contains(t, string(kept), "postgres://app:", "the rest of what the host said is kept")

	// Not built yet, or being changed: refused, typed.
	_, err = a.Assess(ctx, "o", "compute.node/h1", "alice")
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "a type that observes nothing")
}
