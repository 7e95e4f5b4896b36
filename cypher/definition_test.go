package cypher_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/pack"
)

// TestSearchSeesRedefinedCapability: a store remembers the definitions it
// searched with; when another process installs a pack version that changes
// a constraint's match mode, the next search judges by the new one.
func TestSearchSeesRedefinedCapability(t *testing.T) {
	ctx := context.Background()
	org := "redefine-" + capstan.NewID()[12:]
	searching, other := open(t), open(t)
	install := func(version string, match string) {
		p := &capstan.ScenarioPack{ID: "sizes", Version: version, Source: "internal",
			Capabilities: []capstan.CapabilityDefinition{{Key: "block.volume", Category: "storage",
				ConstraintSchema: map[string]capstan.ConstraintSpec{"size_gb": {Type: "integer", Match: match}}}}}
		p.Digest = pack.Digest(p)
		_, err := other.InstallPack(ctx, org, p)
		require.NoError(t, err)
	}
	install("1.0.0", capstan.MatchMinimum)
	_, err := other.ImportResources(ctx, org, []*capstan.Resource{{Type: "disk", Name: "d1", LifecycleStatus: capstan.LifecycleActive,
		HealthStatus: capstan.HealthHealthy, ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "block.volume", Attributes: map[string]any{"size_gb": 100}}}}})
	require.NoError(t, err)
	q := capstan.CandidateQuery{Capability: "block.volume", Constraints: map[string]any{"size_gb": 50}}

	found, err := searching.FindCandidates(ctx, org, q)
	require.NoError(t, err)
	require.Equal(t, 1, found.Passing, "100 GB is at least 50")

	install("1.1.0", capstan.MatchExact)
	found, err = searching.FindCandidates(ctx, org, q)
	require.NoError(t, err)
	require.Equal(t, 0, found.Passing, "the newer version wants exactly 50")
	require.Equal(t, []string{"size_gb"}, found.Candidates[0].Failed)

	_, err = searching.FindCandidates(ctx, org, capstan.CandidateQuery{Capability: "nothing.here"})
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
}
