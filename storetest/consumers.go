package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// testCandidateConsumers: every returned candidate carries the keys of
// the resources that run on, depend on, use or connect to it — deleted
// ones and part_of not counted, another organization's never — so a
// policy can tell a provider that already serves a workload.
func testCandidateConsumers(t *testing.T, s capstan.Store) {
	installTestPack(t, s, orgA)
	held := resource("s3.bucket", "held", "prod", provides("object_storage.s3", map[string]any{"region": "eu"}, nil))
	free := resource("s3.bucket", "free", "prod", provides("object_storage.s3", map[string]any{"region": "eu"}, nil))
	user := resource("tempo.instance", "user", "prod")
	user.Relationships = []capstan.Relationship{{Type: capstan.RelUses, Target: held.Key()}}
	runner := resource("tempo.instance", "runner", "prod")
	runner.Relationships = []capstan.Relationship{{Type: capstan.RelRunsOn, Target: held.Key()}, {Type: capstan.RelDependsOn, Target: held.Key()}}
	gone := resource("tempo.instance", "gone", "prod")
	gone.LifecycleStatus = capstan.LifecycleDeleted
	gone.Relationships = []capstan.Relationship{{Type: capstan.RelUses, Target: held.Key()}}
	part := resource("tempo.instance", "part", "prod")
	part.Relationships = []capstan.Relationship{{Type: capstan.RelPartOf, Target: free.Key()}}
	_, err := s.ImportResources(ctx, orgA, []*capstan.Resource{held, free, user, runner, gone, part})
	require.NoError(t, err)
	// orgB's resource of the same key, used there, changes nothing here.
	installTestPack(t, s, orgB)
	heldB := resource("s3.bucket", "free", "prod", provides("object_storage.s3", map[string]any{"region": "eu"}, nil))
	userB := resource("tempo.instance", "user", "prod")
	userB.Relationships = []capstan.Relationship{{Type: capstan.RelUses, Target: heldB.Key()}}
	_, err = s.ImportResources(ctx, orgB, []*capstan.Resource{heldB, userB})
	require.NoError(t, err)

	found, err := s.FindCandidates(ctx, orgA, capstan.CandidateQuery{Capability: "object_storage.s3", Constraints: map[string]any{"region": "eu"}})
	require.NoError(t, err)
	consumers := map[string][]string{}
	for _, c := range found.Candidates {
		consumers[c.Resource.Key()] = c.Consumers
	}
	require.Equal(t, []string{"tempo.instance/runner", "tempo.instance/user"}, consumers["s3.bucket/held"], "sorted, each once, the deleted one left out")
	require.Empty(t, consumers["s3.bucket/free"], "part_of is no use, and orgB's user is orgB's")

	// The query's owner and what is part_of it are not the provider's
	// other consumers: re-applying the owner keeps its provider.
	ingester := resource("tempo.instance", "user-ingester", "prod")
	ingester.Relationships = []capstan.Relationship{{Type: capstan.RelPartOf, Target: user.Key()}, {Type: capstan.RelUses, Target: held.Key()}}
	_, err = s.ImportResources(ctx, orgA, []*capstan.Resource{ingester})
	require.NoError(t, err)
	owned, err := s.FindCandidates(ctx, orgA, capstan.CandidateQuery{Capability: "object_storage.s3", Provider: held.Key(), Owner: user.Key()})
	require.NoError(t, err)
	require.Equal(t, []string{"tempo.instance/runner"}, owned.Candidates[0].Consumers, "the owner and its part are left out")
	require.False(t, owned.Candidates[0].MoreConsumers)

	// Deleting the consumer frees the provider.
	stored, err := s.GetResourceByKey(ctx, orgA, user.Key())
	require.NoError(t, err)
	stored.LifecycleStatus = capstan.LifecycleDeleted
	require.NoError(t, s.UpdateResource(ctx, orgA, stored))
	only, err := s.FindCandidates(ctx, orgA, capstan.CandidateQuery{Capability: "object_storage.s3", Provider: held.Key()})
	require.NoError(t, err)
	require.Len(t, only.Candidates, 1)
	require.Equal(t, []string{"tempo.instance/runner", "tempo.instance/user-ingester"}, only.Candidates[0].Consumers)

	// Past MaxConsumers a candidate carries that many and says there are more.
	var many []*capstan.Resource
	for i := range capstan.MaxConsumers + 5 {
		r := resource("tempo.instance", fmt.Sprintf("many-%02d", i), "prod")
		r.Relationships = []capstan.Relationship{{Type: capstan.RelUses, Target: free.Key()}}
		many = append(many, r)
	}
	_, err = s.ImportResources(ctx, orgA, many)
	require.NoError(t, err)
	crowded, err := s.FindCandidates(ctx, orgA, capstan.CandidateQuery{Capability: "object_storage.s3", Provider: free.Key()})
	require.NoError(t, err)
	require.Len(t, crowded.Candidates[0].Consumers, capstan.MaxConsumers)
	require.True(t, crowded.Candidates[0].MoreConsumers)
	require.True(t, slices.IsSorted(crowded.Candidates[0].Consumers))
}
