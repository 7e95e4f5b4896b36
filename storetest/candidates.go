package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// testCandidatesMatchReference holds FindCandidates to the naive search
// (every resource, every implying capability, CheckCandidate in Go, then
// SelectCandidates) on a catalog where many providers offer the same facts
// and some offer their own, for constraints of every match mode, a name,
// one provider, and pages; then again after updates that move providers
// to other offers (lifecycle, region) and take one away.
func testCandidatesMatchReference(t *testing.T, s capstan.Store) {
	installTestPack(t, s, orgA)
	var rs []*capstan.Resource
	for i := range 120 {
		scope := map[string]any{"region": []string{"eu", "us", "ap"}[i%3]}
		attrs := map[string]any{"min_capacity_gb": 100 * (i % 4), "tier": []string{"gold", "silver"}[i%2]}
		if i%10 == 0 {
			scope["environment"] = "staging" // the scope overrides the resource's environment
		}
		capability, typ := "object_storage.s3", "s3.bucket"
		if i%4 == 0 {
			capability, typ = "object_storage.minio", "minio.instance"
		}
		r := resource(typ, fmt.Sprintf("r%03d", (i*37)%120), []string{"prod", "dev"}[i%2], provides(capability, scope, attrs))
		if i%7 == 0 && capability != "object_storage.minio" {
			r.ProvidedCapabilities = append(r.ProvidedCapabilities, provides("object_storage.minio", map[string]any{"region": "eu"}, nil))
		}
		if i%9 == 0 {
			r.LifecycleStatus = capstan.LifecycleDegraded
		}
		rs = append(rs, r)
	}
	_, err := s.ImportResources(ctx, orgA, rs)
	require.NoError(t, err)

	queries := []capstan.CandidateQuery{
		{Capability: "object_storage.s3"},
		{Capability: "object_storage.s3", Constraints: map[string]any{"region": "eu", "environment": "prod"}},
		{Capability: "object_storage.s3", Constraints: map[string]any{"region": []any{"eu", "ap"}, "min_capacity_gb": 200, "tier": "gold"}},
		{Capability: "object_storage.s3", Constraints: map[string]any{"name": "r007", "region": "us"}},
		{Capability: "object_storage.s3", Constraints: map[string]any{"region": "eu"}, SkipPassing: 3, MaxPassing: 4, MaxRejected: 3},
		{Capability: "object_storage.s3", Constraints: map[string]any{"environment": "staging"}, MaxPassing: -1, MaxRejected: -1},
		{Capability: "object_storage.s3", Constraints: map[string]any{"region": "eu"}, Provider: rs[14].Key()},
		{Capability: "object_storage.minio", Constraints: map[string]any{"region": "eu"}, MaxRejected: 0},
		// A repair's requirement accepts the degraded (and failed) resource it is for.
		{Capability: "object_storage.s3", Constraints: map[string]any{"region": "eu"}, Lifecycles: capstan.Lifecycles{capstan.LifecycleActive, capstan.LifecycleDegraded, capstan.LifecycleFailed}},
		{Capability: "object_storage.s3", Lifecycles: capstan.Lifecycles{capstan.LifecycleDegraded}, MaxPassing: -1, MaxRejected: -1},
	}
	check := func(stage string) {
		for _, q := range queries {
			got, err := s.FindCandidates(ctx, orgA, q)
			require.NoError(t, err)
			want := referenceCandidates(t, s, orgA, q)
			msg := fmt.Sprintf("%s: %+v", stage, q)
			require.Equal(t, refs(want.Candidates), refs(got.Candidates), msg)
			for i := range got.Candidates {
				require.Equal(t, want.Candidates[i].Failed, got.Candidates[i].Failed, msg)
				require.Equal(t, want.Candidates[i].Via, got.Candidates[i].Via, msg)
			}
			require.Equal(t, []int{want.Considered, want.Passing, want.Omitted}, []int{got.Considered, got.Passing, got.Omitted}, msg)
			require.Equal(t, want.OmittedBy, got.OmittedBy, msg)
		}
	}
	check("imported")

	for _, i := range []int{1, 2, 3, 5} {
		r, err := s.GetResourceByKey(ctx, orgA, rs[i].Key())
		require.NoError(t, err)
		if i%2 == 1 {
			r.LifecycleStatus = capstan.LifecycleDeleted
		} else {
			r.ProvidedCapabilities[0].Scope["region"] = "ap"
		}
		require.NoError(t, s.UpdateResource(ctx, orgA, r))
	}
	gone, err := s.GetResourceByKey(ctx, orgA, rs[6].Key())
	require.NoError(t, err)
	gone.ProvidedCapabilities = nil
	require.NoError(t, s.UpdateResource(ctx, orgA, gone))
	check("updated")
}

// referenceCandidates is FindCandidates done the naive way.
func referenceCandidates(t *testing.T, s capstan.Store, org string, q capstan.CandidateQuery) capstan.CandidateResult {
	defs, err := s.ListCapabilities(ctx, org)
	require.NoError(t, err)
	byKey := map[string]*capstan.CapabilityDefinition{}
	for _, d := range defs {
		byKey[d.Key] = d
	}
	rs, _, err := s.ListResources(ctx, org, capstan.ResourceFilter{Limit: 1 << 20})
	require.NoError(t, err)
	var all []capstan.Candidate
	for _, src := range capstan.ImplyingCapabilities(byKey, q.Capability, capstan.DefaultImplicationDepth) {
		for _, r := range rs {
			pc := r.Provides(src.Capability)
			if pc == nil || (q.Provider != "" && r.Key() != q.Provider) {
				continue
			}
			facts := r.Facts(pc)
			failed := capstan.CandidateFailures(nil, &facts, q.Lifecycles, q.Constraints, capstan.SortedKeys(q.Constraints), byKey[q.Capability].Spec)
			all = append(all, capstan.Candidate{Resource: r, Capability: src.Capability, Via: src.Via, Failed: failed})
		}
	}
	slices.SortStableFunc(all, func(a, b capstan.Candidate) int {
		return cmp.Or(len(a.Via)-len(b.Via), cmp.Compare(a.Resource.Key(), b.Resource.Key()), cmp.Compare(a.Capability, b.Capability))
	})
	return capstan.SelectCandidates(all, q)
}
