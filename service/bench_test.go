package service_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/service"
)

// BenchmarkPlanIntentSeed10k plans the seed's example on the embedded store
// over the demo catalog plus 10,000 resources. Target: <= 20 ms per plan.
func BenchmarkPlanIntentSeed10k(b *testing.B) {
	store := testenv.Store(b)
	svc := testenv.Demo(b, store)
	ctx := testenv.Admin(testenv.Org)
	rs := testenv.SyntheticCatalog(testenv.BenchResources(10000))
	for i := 0; i < len(rs); i += 2000 {
		_, err := store.ImportResources(ctx, testenv.Org, rs[i:min(i+2000, len(rs))])
		require.NoError(b, err)
	}
	in, err := svc.CreateIntent(ctx, testenv.SeedIntent())
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p, err := svc.PlanIntent(ctx, in.ID)
		if err != nil || p.Status != capstan.PlanReady {
			b.Fatalf("plan: %v %v", err, p.Problems)
		}
	}
}

// BenchmarkPlanOnly measures the planner without writing the plan.
func BenchmarkPlanOnly10k(b *testing.B) {
	store := testenv.Store(b)
	svc := testenv.Demo(b, store)
	ctx := testenv.Admin(testenv.Org)
	_, err := store.ImportResources(ctx, testenv.Org, testenv.SyntheticCatalog(testenv.BenchResources(10000)))
	require.NoError(b, err)
	in, err := svc.CreateIntent(ctx, service.IntentInput(testenv.SeedIntent()))
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := svc.DryRunPlan(ctx, in.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPatch500 is testenv.BenchmarkPatch on the embedded store.
// Target: <= 5 ms.
func BenchmarkPatch500(b *testing.B) {
	testenv.BenchmarkPatch(b, testenv.Store(b), testenv.Org)
}
