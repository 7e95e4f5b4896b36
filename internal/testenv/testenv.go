// Package testenv builds the fixtures tests share: an embedded store in a
// temporary directory with the bundled packs and the demo catalog.
package testenv

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/catalog"
	"github.com/capstan-dev/capstan/embedded"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/packs"
	"github.com/capstan-dev/capstan/service"
)

// Org is the demo organization.
const Org = "demo"

// Admin returns a context for an admin of org.
func Admin(org string) context.Context {
	return capstan.WithActor(context.Background(), &capstan.Actor{ID: "alice", OrganizationID: org, Roles: []string{capstan.RoleAdmin}})
}

// Store opens an embedded store in a temporary directory, closed at cleanup.
func Store(t testing.TB) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// Demo returns a service over store with the bundled packs and the demo
// catalog installed for Org.
func Demo(t testing.TB, store capstan.Store) *service.Service {
	t.Helper()
	return DemoIn(t, store, Org)
}

// DemoIn is Demo for another organization: tests on a shared Neo4j
// (NEO4J_URI) use a fresh one each.
func DemoIn(t testing.TB, store capstan.Store, org string) *service.Service {
	t.Helper()
	wakes := live.NewWakes()
	svc := service.New(live.Store{Store: store, Wakes: wakes}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := Admin(org)
	require.NoError(t, svc.InstallPacks(ctx, org, packs.FS, packs.Order))
	require.NoError(t, svc.SeedDemoCatalog(ctx, org, catalog.Demo))
	wakes.Listen(NewCommandOwner(svc, store).Wake) // an executor started with Wakes(svc) listens instead
	return svc
}

// Wakes are the wakes of a service DemoIn made: an executor given them
// (executor.Config.Wakes) acts on what the service starts and commands.
func Wakes(svc *service.Service) *live.Wakes {
	if ls, ok := svc.Store.(live.Store); ok {
		return ls.Wakes
	}
	return nil
}

// NewOrg returns a fresh organization id.
func NewOrg() string { return "demo-" + capstan.NewID()[12:] }

// SeedIntent is the seed's example: install Tempo 2.x in prod on prod-k8s,
// told with the simulated scenarios the demo catalog's targets allow.
func SeedIntent() service.IntentInput {
	return service.IntentInput{
		Action: "install", TargetResourceType: "tempo.instance", Scenario: packs.SimulatedTempoInstall,
		DesiredResult: map[string]any{"name": "prod-tempo", "version": "2.x"},
		Constraints:   map[string]any{"environment": "prod", "cluster": "prod-k8s"},
	}
}
