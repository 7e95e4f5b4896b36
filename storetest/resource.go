package storetest

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func testResourceCRUD(t *testing.T, s capstan.Store) {
	r := resource("compute.node", "n1", "prod", provides("linux.host", map[string]any{"region": "eu"}, nil))
	require.NoError(t, s.CreateResource(ctx, orgA, r))
	require.NotEmpty(t, r.ID)
	require.Equal(t, int64(1), r.Version)
	require.Equal(t, orgA, r.OrganizationID)
	require.False(t, r.CreatedAt.IsZero())

	got, err := s.GetResource(ctx, orgA, r.ID)
	require.NoError(t, err)
	require.Equal(t, "compute.node/n1", got.Key())
	require.Equal(t, "eu", got.ProvidedCapabilities[0].Scope["region"])
	byKey, err := s.GetResourceByKey(ctx, orgA, "compute.node/n1")
	require.NoError(t, err)
	require.Equal(t, r.ID, byKey.ID)

	dup := resource("compute.node", "n1", "prod")
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(s.CreateResource(ctx, orgA, dup)))

	got.HealthStatus = capstan.HealthDegraded
	require.NoError(t, s.UpdateResource(ctx, orgA, got))
	require.Equal(t, int64(2), got.Version)
	again, err := s.GetResource(ctx, orgA, r.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.HealthDegraded, again.HealthStatus)
	require.Equal(t, r.CreatedAt.Unix(), again.CreatedAt.Unix())

	_, err = s.GetResource(ctx, orgA, "missing")
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
	ghost := resource("compute.node", "ghost", "prod")
	ghost.ID = "missing"
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(s.UpdateResource(ctx, orgA, ghost)))

	bad := resource("compute.node", "Bad Name", "prod")
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(s.CreateResource(ctx, orgA, bad)))
	dangling := resource("tempo.instance", "t", "prod")
	dangling.Relationships = []capstan.Relationship{{Type: capstan.RelRunsOn, Target: "kubernetes.cluster/none"}}
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(s.CreateResource(ctx, orgA, dangling)))

	many, err := s.GetResources(ctx, orgA, []string{r.ID, "missing"})
	require.NoError(t, err)
	require.Len(t, many, 2)
	require.NotNil(t, many[0])
	require.Nil(t, many[1])
	byKeys, err := s.GetResourcesByKey(ctx, orgA, []string{"nope/x", "compute.node/n1"})
	require.NoError(t, err)
	require.Nil(t, byKeys[0])
	require.Equal(t, r.ID, byKeys[1].ID)
}

func testStaleVersion(t *testing.T, s capstan.Store) {
	r := resource("compute.node", "n1", "prod")
	require.NoError(t, s.CreateResource(ctx, orgA, r))
	first, _ := s.GetResource(ctx, orgA, r.ID)
	second, _ := s.GetResource(ctx, orgA, r.ID)
	first.HealthStatus = capstan.HealthDegraded
	require.NoError(t, s.UpdateResource(ctx, orgA, first))
	second.HealthStatus = capstan.HealthUnhealthy
	err := s.UpdateResource(ctx, orgA, second)
	requireStale(t, err, "a resource update from an old version (it must never overwrite)")
	got, _ := s.GetResource(ctx, orgA, r.ID)
	require.Equal(t, capstan.HealthDegraded, got.HealthStatus)
}

func testConcurrentWriters(t *testing.T, s capstan.Store) {
	r := resource("compute.node", "n1", "prod")
	require.NoError(t, s.CreateResource(ctx, orgA, r))
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	copies := make([]*capstan.Resource, writers)
	for i := range copies {
		copies[i], _ = s.GetResource(ctx, orgA, r.ID)
		copies[i].ObservedState = map[string]any{"writer": float64(i)}
	}
	start := make(chan struct{})
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			errs[i] = s.UpdateResource(ctx, orgA, copies[i])
		}(i)
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))
	}
	require.Equal(t, 1, ok, "exactly one of the writers that read the same version wins")
	got, _ := s.GetResource(ctx, orgA, r.ID)
	require.Equal(t, int64(2), got.Version)
}

func testImportUpserts(t *testing.T, s capstan.Store) {
	node := resource("compute.node", "n1", "prod")
	cluster := resource("kubernetes.cluster", "c1", "prod", provides("kubernetes.cluster", nil, nil))
	cluster.Relationships = []capstan.Relationship{{Type: capstan.RelRunsOn, Target: "compute.node/n1"}}
	res, err := s.ImportResources(ctx, orgA, []*capstan.Resource{cluster, node})
	require.NoError(t, err)
	require.Equal(t, capstan.ImportResult{Created: 2}, res)
	id := cluster.ID

	cluster2 := resource("kubernetes.cluster", "c1", "prod", provides("kubernetes.cluster", map[string]any{"region": "eu"}, nil))
	res, err = s.ImportResources(ctx, orgA, []*capstan.Resource{cluster2})
	require.NoError(t, err)
	require.Equal(t, capstan.ImportResult{Updated: 1}, res)
	got, _ := s.GetResourceByKey(ctx, orgA, "kubernetes.cluster/c1")
	require.Equal(t, id, got.ID, "an import keeps the resource's identity")
	require.Equal(t, int64(2), got.Version)
	require.Empty(t, got.Relationships, "the import is the catalog's truth")
	deps, err := s.Dependencies(ctx, orgA, node.ID, capstan.Incoming, 1, 10)
	require.NoError(t, err)
	require.Empty(t, deps, "the old runs_on edge is gone from the index too")
}

func testImportAtomic(t *testing.T, s capstan.Store) {
	good := resource("compute.node", "n1", "prod")
	bad := resource("tempo.instance", "t", "prod")
	bad.Relationships = []capstan.Relationship{{Type: capstan.RelRunsOn, Target: "kubernetes.cluster/missing"}}
	_, err := s.ImportResources(ctx, orgA, []*capstan.Resource{good, bad})
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	require.Contains(t, err.Error(), "kubernetes.cluster/missing")
	_, total, err := s.ListResources(ctx, orgA, capstan.ResourceFilter{})
	require.NoError(t, err)
	require.Zero(t, total, "a failed import writes nothing")

	twice := []*capstan.Resource{resource("compute.node", "n1", "prod"), resource("compute.node", "n1", "prod")}
	_, err = s.ImportResources(ctx, orgA, twice)
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
}

func testListResources(t *testing.T, s capstan.Store) {
	var rs []*capstan.Resource
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		env := "prod"
		if n == "c" {
			env = "staging"
		}
		r := resource("compute.node", n, env, provides("linux.host", nil, nil))
		switch n {
		case "b":
			r.HealthStatus = capstan.HealthDrifted
		case "d":
			r.HealthStatus = capstan.HealthUnreachable
		}
		rs = append(rs, r)
	}
	rs = append(rs, resource("kubernetes.cluster", "k", "prod", provides("kubernetes.cluster", nil, nil)))
	_, err := s.ImportResources(ctx, orgA, rs)
	require.NoError(t, err)

	page, total, err := s.ListResources(ctx, orgA, capstan.ResourceFilter{Limit: 2})
	require.NoError(t, err)
	require.Equal(t, 6, total)
	require.Equal(t, []string{"compute.node/a", "compute.node/b"}, keys(page))
	page, _, err = s.ListResources(ctx, orgA, capstan.ResourceFilter{Limit: 2, After: "compute.node/b"})
	require.NoError(t, err)
	require.Equal(t, []string{"compute.node/c", "compute.node/d"}, keys(page))

	page, total, err = s.ListResources(ctx, orgA, capstan.ResourceFilter{Environment: "prod", Capability: "linux.host"})
	require.NoError(t, err)
	require.Equal(t, 4, total)
	require.Equal(t, []string{"compute.node/a", "compute.node/b", "compute.node/d", "compute.node/e"}, keys(page))
	page, _, err = s.ListResources(ctx, orgA, capstan.ResourceFilter{Type: "kubernetes.cluster"})
	require.NoError(t, err)
	require.Equal(t, []string{"kubernetes.cluster/k"}, keys(page))
	page, total, err = s.ListResources(ctx, orgA, capstan.ResourceFilter{Search: "CLUSTER/"})
	require.NoError(t, err)
	require.Equal(t, 1, total, "search ignores case")
	require.Equal(t, []string{"kubernetes.cluster/k"}, keys(page))
	page, total, err = s.ListResources(ctx, orgA, capstan.ResourceFilter{Health: []capstan.HealthStatus{capstan.HealthDrifted, capstan.HealthUnreachable}})
	require.NoError(t, err)
	require.Equal(t, 2, total, "what an assessment found wrong")
	require.Equal(t, []string{"compute.node/b", "compute.node/d"}, keys(page))
	page, total, err = s.ListResources(ctx, orgA, capstan.ResourceFilter{Search: "node/", Environment: "staging"})
	require.NoError(t, err)
	require.Equal(t, 1, total)
	require.Equal(t, []string{"compute.node/c"}, keys(page))
}

func keys(rs []*capstan.Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Key()
	}
	return out
}

func testOrgIsolation(t *testing.T, s capstan.Store) {
	installTestPack(t, s, orgA)
	a := resource("minio.instance", "shared", "prod", provides("object_storage.s3", map[string]any{"region": "eu"}, nil))
	require.NoError(t, s.CreateResource(ctx, orgA, a))

	_, err := s.GetResource(ctx, orgB, a.ID)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
	_, err = s.GetResourceByKey(ctx, orgB, a.Key())
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
	got, err := s.GetResources(ctx, orgB, []string{a.ID})
	require.NoError(t, err)
	require.Nil(t, got[0])
	_, total, err := s.ListResources(ctx, orgB, capstan.ResourceFilter{})
	require.NoError(t, err)
	require.Zero(t, total)
	stolen := *a
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(s.UpdateResource(ctx, orgB, &stolen)))

	// Org B has no packs, so it does not know the capability at all.
	_, err = s.FindCandidates(ctx, orgB, capstan.CandidateQuery{Capability: "object_storage.s3"})
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
	installTestPack(t, s, orgB)
	found, err := s.FindCandidates(ctx, orgB, capstan.CandidateQuery{Capability: "object_storage.s3"})
	require.NoError(t, err)
	require.Empty(t, found.Candidates, "org A's providers never serve org B")
	require.Zero(t, found.Considered)

	packs, err := s.ListPacks(ctx, orgB)
	require.NoError(t, err)
	require.Len(t, packs, 1)
	in := newIntent()
	require.NoError(t, s.CreateIntent(ctx, orgA, in))
	_, err = s.GetIntent(ctx, orgB, in.ID)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
	list, total, err := s.ListIntents(ctx, orgB, capstan.IntentFilter{})
	require.NoError(t, err)
	require.Zero(t, total)
	require.Empty(t, list)
}
