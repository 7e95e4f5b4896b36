package service_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/service"
)

// syntheticCatalog returns n resources shaped like a large platform: nodes,
// clusters running on them, object storage and secret stores spread over
// environments and regions, so candidate searches have real competition.
func syntheticCatalog(n int) []*capstan.Resource {
	envs := []string{"prod", "staging", "dev"}
	regions := []string{"eu-central", "eu-west", "us-east", "us-west", "ap-south"}
	var out []*capstan.Resource
	for i := 0; len(out) < n; i++ {
		env, region := envs[i%len(envs)], regions[i%len(regions)]
		scope := map[string]any{"environment": env, "region": region}
		node := &capstan.Resource{Type: "compute.node", Name: fmt.Sprintf("bulk-node-%d", i), Environment: env,
			LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
			ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "linux.host", Scope: scope, Attributes: map[string]any{"os": "debian"}}, {Capability: "ssh.access"}}}
		out = append(out, node)
		switch i % 4 {
		case 0:
			out = append(out, &capstan.Resource{Type: "kubernetes.cluster", Name: fmt.Sprintf("bulk-k8s-%d", i), Environment: env,
				LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
				ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "kubernetes.cluster", Scope: scope}},
				Relationships:        []capstan.Relationship{{Type: capstan.RelRunsOn, Target: node.Key()}}})
		case 1:
			mode := "shared"
			if i%3 == 0 {
				mode = "dedicated"
			}
			out = append(out, &capstan.Resource{Type: "minio.instance", Name: fmt.Sprintf("bulk-s3-%d", i), Environment: env,
				LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
				ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "object_storage.s3", Scope: scope,
					Attributes: map[string]any{"encryption": "required", "access_mode": mode, "min_capacity_gb": 100 * (i % 20)}}}})
		case 2:
			out = append(out, &capstan.Resource{Type: "vault.instance", Name: fmt.Sprintf("bulk-vault-%d", i), Environment: env,
				LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
				ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "secret.store", Scope: scope, Attributes: map[string]any{"engine": "kv-v2"}}}})
		}
	}
	return out[:n]
}

// BenchmarkPlanIntentSeed10k plans the seed's example on the embedded store
// over the demo catalog plus 10,000 resources. Target: <= 20 ms per plan.
func BenchmarkPlanIntentSeed10k(b *testing.B) {
	store := testenv.Store(b)
	svc := testenv.Demo(b, store)
	ctx := testenv.Admin(testenv.Org)
	rs := syntheticCatalog(10000)
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
	_, err := store.ImportResources(ctx, testenv.Org, syntheticCatalog(10000))
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
