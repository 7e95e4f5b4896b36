package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func testFindCandidates(t *testing.T, s capstan.Store) {
	installTestPack(t, s, orgA)
	s3 := resource("s3.bucket", "direct", "prod", provides("object_storage.s3", map[string]any{"region": "eu"}, map[string]any{"min_capacity_gb": 100}))
	minio := resource("minio.instance", "implied", "prod", provides("object_storage.minio", map[string]any{"region": "eu"}, map[string]any{"min_capacity_gb": 1000}))
	small := resource("s3.bucket", "small", "prod", provides("object_storage.s3", map[string]any{"region": "us"}, map[string]any{"min_capacity_gb": 10}))
	gone := resource("s3.bucket", "gone", "prod", provides("object_storage.s3", map[string]any{"region": "eu"}, map[string]any{"min_capacity_gb": 500}))
	gone.LifecycleStatus = capstan.LifecycleDeleted
	other := resource("compute.node", "n", "prod", provides("linux.host", nil, nil))
	_, err := s.ImportResources(ctx, orgA, []*capstan.Resource{s3, minio, small, gone, other})
	require.NoError(t, err)

	found, err := s.FindCandidates(ctx, orgA, capstan.CandidateQuery{
		Capability:  "object_storage.s3",
		Constraints: map[string]any{"region": "eu", "min_capacity_gb": 50},
	})
	require.NoError(t, err)
	require.Equal(t, 4, found.Considered)
	require.Zero(t, found.Omitted)
	cands := found.Candidates
	byKey := map[string]capstan.Candidate{}
	var order []string
	for _, c := range cands {
		byKey[c.Resource.Key()] = c
		order = append(order, c.Resource.Key())
	}
	require.Equal(t, []string{"s3.bucket/direct", "s3.bucket/gone", "s3.bucket/small", "minio.instance/implied"}, order,
		"direct providers first (by key), then implied ones")
	require.True(t, passed(byKey["s3.bucket/direct"]))
	require.True(t, passed(byKey["minio.instance/implied"]))
	require.Equal(t, []string{"object_storage.minio", "object_storage.s3"}, byKey["minio.instance/implied"].Via)
	require.Equal(t, "object_storage.minio", byKey["minio.instance/implied"].Capability)
	require.Equal(t, []string{"lifecycle: want active, got deleted"}, failedReasons(byKey["s3.bucket/gone"]))
	require.Equal(t, []string{"min_capacity_gb: want at least 50, got 10", "region: want eu, got us"}, failedReasons(byKey["s3.bucket/small"]))

	_, err = s.FindCandidates(ctx, orgA, capstan.CandidateQuery{Capability: "unknown.cap"})
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
	direct, err := s.FindCandidates(ctx, orgA, capstan.CandidateQuery{Capability: "object_storage.minio"})
	require.NoError(t, err)
	require.Len(t, direct.Candidates, 1, "implication only walks towards the wanted capability")

	// Only the nearest misses are listed; the rest are counted.
	capped, err := s.FindCandidates(ctx, orgA, capstan.CandidateQuery{
		Capability: "object_storage.s3", Constraints: map[string]any{"region": "eu", "min_capacity_gb": 50}, MaxRejected: 1,
	})
	require.NoError(t, err)
	require.Equal(t, 4, capped.Considered)
	require.Equal(t, 1, capped.Omitted)
	require.Equal(t, map[string]int{"min_capacity_gb": 1, "region": 1}, capped.OmittedBy, "the miss with two failed checks is omitted")
	var listed []string
	for _, c := range capped.Candidates {
		listed = append(listed, c.Resource.Key())
	}
	require.Equal(t, []string{"s3.bucket/direct", "s3.bucket/gone", "minio.instance/implied"}, listed)
}

func passed(c capstan.Candidate) bool { return c.Passed() }

func failedReasons(c capstan.Candidate) []string {
	var out []string
	for _, ch := range c.Checks {
		if !ch.Passed {
			out = append(out, ch.Reason)
		}
	}
	return out
}

// chain imports node <- cluster <- app (runs_on) plus a depends_on edge.
func chain(t *testing.T, s capstan.Store) map[string]*capstan.Resource {
	node := resource("compute.node", "n1", "prod", provides("linux.host", map[string]any{"region": "eu-central"}, nil))
	cluster := resource("kubernetes.cluster", "c1", "prod", provides("kubernetes.cluster", nil, nil))
	cluster.Relationships = []capstan.Relationship{{Type: capstan.RelRunsOn, Target: node.Key()}}
	vault := resource("vault.instance", "v1", "prod", provides("secret.store", nil, nil))
	vault.Relationships = []capstan.Relationship{{Type: capstan.RelRunsOn, Target: cluster.Key()}}
	app := resource("tempo.instance", "t1", "prod")
	app.Relationships = []capstan.Relationship{{Type: capstan.RelRunsOn, Target: cluster.Key()}, {Type: capstan.RelDependsOn, Target: vault.Key()}}
	_, err := s.ImportResources(ctx, orgA, []*capstan.Resource{node, cluster, vault, app})
	require.NoError(t, err)
	return map[string]*capstan.Resource{"node": node, "cluster": cluster, "vault": vault, "app": app}
}

func testTopology(t *testing.T, s capstan.Store) {
	rs := chain(t, s)
	hit, err := s.TopologyValue(ctx, orgA, rs["app"].ID, "region", 4)
	require.NoError(t, err)
	require.True(t, hit.Found)
	require.Equal(t, "eu-central", hit.Value)
	require.Equal(t, "compute.node/n1", hit.From)
	require.Equal(t, []string{"tempo.instance/t1", "kubernetes.cluster/c1", "compute.node/n1"}, hit.Path)

	hit, err = s.TopologyValue(ctx, orgA, rs["app"].ID, "region", 1)
	require.NoError(t, err)
	require.False(t, hit.Found, "the walk is bounded")
	hit, err = s.TopologyValue(ctx, orgA, rs["cluster"].ID, "environment", 4)
	require.NoError(t, err)
	require.Equal(t, "prod", hit.Value)
	require.Equal(t, "kubernetes.cluster/c1", hit.From)
	_, err = s.TopologyValue(ctx, orgA, "missing", "region", 4)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
}

func testDependencies(t *testing.T, s capstan.Store) {
	rs := chain(t, s)
	out, err := s.Dependencies(ctx, orgA, rs["app"].ID, capstan.Outgoing, 3, 3)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{
		"1 runs_on tempo.instance/t1 -> kubernetes.cluster/c1",
		"1 depends_on tempo.instance/t1 -> vault.instance/v1",
		"2 runs_on kubernetes.cluster/c1 -> compute.node/n1",
	}, describe(out, capstan.Outgoing))

	in, err := s.Dependencies(ctx, orgA, rs["node"].ID, capstan.Incoming, 3, 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{
		"1 runs_on kubernetes.cluster/c1 -> compute.node/n1",
		"2 runs_on tempo.instance/t1 -> kubernetes.cluster/c1",
		"2 runs_on vault.instance/v1 -> kubernetes.cluster/c1",
	}, describe(in, capstan.Incoming))

	one, err := s.Dependencies(ctx, orgA, rs["node"].ID, capstan.Incoming, 1, 10)
	require.NoError(t, err)
	require.Len(t, one, 1)
	// A walk that reaches more than its limit is refused, typed, on both
	// stores: exactly the limit passes.
	_, err = s.Dependencies(ctx, orgA, rs["node"].ID, capstan.Incoming, 3, 2)
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	var ce *capstan.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "graphWalk", ce.Extensions["limit"])
	exact, err := s.Dependencies(ctx, orgA, rs["node"].ID, capstan.Incoming, 3, 3)
	require.NoError(t, err)
	require.Len(t, exact, 3)
	_, err = s.Dependencies(ctx, orgB, rs["node"].ID, capstan.Incoming, 1, 10)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
}

func describe(deps []capstan.Dependency, dir capstan.Direction) []string {
	var out []string
	for _, d := range deps {
		from, to := d.From, d.Resource.Key()
		if dir == capstan.Incoming {
			from, to = to, from
		}
		out = append(out, string(rune('0'+d.Depth))+" "+string(d.Relationship)+" "+from+" -> "+to)
	}
	return out
}

// testCandidatePages holds every store to SelectCandidates, the reference
// rule, on pages of passing candidates and caps on misses: the same
// candidates in the same rank order, the same counts.
func testCandidatePages(t *testing.T, s capstan.Store) {
	installTestPack(t, s, orgA)
	var rs []*capstan.Resource
	for i := range 40 {
		region := []string{"eu", "us"}[i%2]
		pc := provides("object_storage.s3", map[string]any{"region": region}, map[string]any{"min_capacity_gb": 10 * (i % 7)})
		typ := "s3.bucket"
		if i%3 == 0 {
			pc.Capability, typ = "object_storage.minio", "minio.instance"
		}
		r := resource(typ, fmt.Sprintf("r%02d", (i*17)%40), "prod", pc)
		if i%5 == 0 && i%3 != 0 { // provides both: a direct and an implied candidate
			r.ProvidedCapabilities = append(r.ProvidedCapabilities, provides("object_storage.minio", map[string]any{"region": "eu"}, nil))
		}
		if i%11 == 0 {
			r.LifecycleStatus = capstan.LifecycleDeleted
		}
		rs = append(rs, r)
	}
	_, err := s.ImportResources(ctx, orgA, rs)
	require.NoError(t, err)
	base := capstan.CandidateQuery{Capability: "object_storage.s3", Constraints: map[string]any{"region": "eu", "min_capacity_gb": 20}}
	allQ := base
	allQ.MaxPassing, allQ.MaxRejected = -1, -1
	all, err := s.FindCandidates(ctx, orgA, allQ)
	require.NoError(t, err)
	require.Len(t, all.Candidates, all.Considered, "asking for all returns all")
	require.Equal(t, 40+5, all.Considered)
	require.True(t, slices.IsSortedFunc(passingOf(all.Candidates), func(a, b capstan.Candidate) int {
		if d := len(a.Via) - len(b.Via); d != 0 {
			return d
		}
		return strings.Compare(a.Resource.Key()+" "+a.Capability, b.Resource.Key()+" "+b.Capability)
	}), "passing candidates come in rank order")
	for _, page := range []struct{ skip, max, rejected int }{
		{0, 3, 2}, {3, 3, 2}, {6, 100, 0}, {0, -1, 1}, {1000, 5, 1}, {2, 0, -1}, {0, 1, 100},
	} {
		q := base
		q.SkipPassing, q.MaxPassing, q.MaxRejected = page.skip, page.max, page.rejected
		got, err := s.FindCandidates(ctx, orgA, q)
		require.NoError(t, err)
		want := capstan.SelectCandidates(all.Candidates, q)
		require.Equal(t, refs(want.Candidates), refs(got.Candidates), "page %+v", page)
		require.Equal(t, want.Considered, got.Considered)
		require.Equal(t, want.Passing, got.Passing)
		require.Equal(t, want.Omitted, got.Omitted, "page %+v", page)
		require.Equal(t, want.OmittedBy, got.OmittedBy, "page %+v", page)
	}
	one := base
	one.Provider = rs[5].Key()
	only, err := s.FindCandidates(ctx, orgA, one)
	require.NoError(t, err)
	require.Equal(t, 2, only.Considered, "the named resource provides s3 directly and through minio")
	require.Equal(t, []string{rs[5].Key() + " object_storage.s3", rs[5].Key() + " object_storage.minio"}, refs(only.Candidates))
}

func passingOf(cs []capstan.Candidate) []capstan.Candidate {
	var out []capstan.Candidate
	for _, c := range cs {
		if c.Passed() {
			out = append(out, c)
		}
	}
	return out
}

func refs(cs []capstan.Candidate) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Resource.Key()+" "+c.Capability)
	}
	return out
}
