package cypher_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/catalog"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/packs"
	"github.com/capstan-dev/capstan/service"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/storetest"
)

func BenchmarkCandidates(b *testing.B) {
	storetest.BenchmarkCandidates(b, func(b *testing.B) capstan.Store { return open(b) })
}

// BenchmarkPlanIntentSeed plans the seed's example on Neo4j over the demo
// catalog. Target: <= 100 ms.
func BenchmarkPlanIntentSeed(b *testing.B) {
	s := open(b)
	org := "plan-" + capstan.NewID()[12:]
	svc := service.New(s, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := capstan.WithActor(context.Background(), &capstan.Actor{ID: "b", OrganizationID: org, Roles: []string{capstan.RoleAdmin}})
	require.NoError(b, svc.InstallPacks(ctx, org, packs.FS, packs.Order))
	require.NoError(b, svc.SeedDemoCatalog(ctx, org, catalog.Demo))
	in, err := svc.CreateIntent(ctx, testenv.SeedIntent())
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		p, err := svc.PlanIntent(ctx, in.ID)
		if err != nil || p.Status != capstan.PlanReady {
			b.Fatalf("plan: %v %v", err, p)
		}
	}
}

// BenchmarkOperationStep is one executor commit of a chain on Neo4j.
func BenchmarkOperationStep(b *testing.B) { storetest.BenchmarkOperationStep(b, open(b)) }
