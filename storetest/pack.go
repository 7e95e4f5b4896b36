package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/pack"
)

// testPack is a small pack: capabilities with an implication and a scenario
// that creates object storage.
func testPack(version string) *capstan.ScenarioPack {
	p := &capstan.ScenarioPack{
		ID: "storage", Version: version, Source: "internal",
		Capabilities: []capstan.CapabilityDefinition{
			{Key: "object_storage.s3", Category: "storage", ConstraintSchema: map[string]capstan.ConstraintSpec{
				"region":          {Type: "string"},
				"min_capacity_gb": {Type: "integer", Match: capstan.MatchMinimum},
			}},
			{Key: "object_storage.minio", Category: "storage", Implies: []string{"object_storage.s3"}},
		},
		ResourceTypes: []capstan.ResourceType{{Key: "minio.instance", DisplayName: "MinIO", AllowedActions: []string{"install"}}},
		Scenarios: []capstan.Scenario{{
			ID: "minio.install", Version: version, Action: "install", TargetResourceType: "minio.instance",
			Provides: []capstan.ProvidedCapability{{Capability: "object_storage.s3"}},
			Plan: capstan.PlanTemplate{Nodes: []capstan.PlanNode{{ID: "verify", Type: capstan.NodeVerification, Title: "Verify",
				Probes: []capstan.Probe{{Name: "up", Type: "sim"}}}}},
		}},
		Policies: []capstan.Policy{{ID: "always", Description: "d", Require: "true"}},
	}
	p.Digest = pack.Digest(p)
	return p
}

func installTestPack(t *testing.T, s capstan.Store, org string) {
	t.Helper()
	_, err := s.InstallPack(ctx, org, testPack("1.0.0"))
	require.NoError(t, err)
}

func testPackImmutable(t *testing.T, s capstan.Store) {
	created, err := s.InstallPack(ctx, orgA, testPack("1.0.0"))
	require.NoError(t, err)
	require.True(t, created)
	created, err = s.InstallPack(ctx, orgA, testPack("1.0.0"))
	require.NoError(t, err, "the same content again is a no-op")
	require.False(t, created)

	changed := testPack("1.0.0")
	changed.Description = "different"
	changed.Digest = pack.Digest(changed)
	_, err = s.InstallPack(ctx, orgA, changed)
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))

	packs, err := s.ListPacks(ctx, orgA)
	refs, err := s.ListPackRefs(ctx, orgA)
	require.NoError(t, err)
	require.Len(t, refs, len(packs), "a ref per installed pack")
	for _, p := range packs {
		require.Contains(t, refs, p.Ref())
	}
	require.NoError(t, err)
	require.Len(t, packs, 1)
	require.Equal(t, "", packs[0].Description, "the conflicting install changed nothing")
	require.False(t, packs[0].InstalledAt.IsZero())

	_, err = s.InstallPack(ctx, orgA, &capstan.ScenarioPack{ID: "nodigest", Version: "1.0.0"})
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
}

func testScenarioVersions(t *testing.T, s capstan.Store) {
	for _, v := range []string{"1.0.0", "1.10.0", "1.9.0"} {
		_, err := s.InstallPack(ctx, orgA, testPack(v))
		require.NoError(t, err)
	}
	packs, err := s.ListPacks(ctx, orgA)
	require.NoError(t, err)
	require.Len(t, packs, 3, "new versions sit beside old ones")
	require.Equal(t, "1.10.0", packs[2].Version, "ordered by semver")

	sc, err := s.GetScenario(ctx, orgA, "minio.install")
	require.NoError(t, err)
	require.Equal(t, "minio.install@1.10.0", sc.Ref(), "a bare id gets the newest version")
	require.Equal(t, "storage@1.10.0", sc.Pack)
	sc, err = s.GetScenario(ctx, orgA, "minio.install@1.0.0")
	require.NoError(t, err)
	require.Equal(t, "1.0.0", sc.Version)
	_, err = s.GetScenario(ctx, orgA, "minio.install@9.9.9")
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))

	all, err := s.ListScenarios(ctx, orgA, capstan.ScenarioFilter{Provides: "object_storage.s3"})
	require.NoError(t, err)
	require.Len(t, all, 3)
	none, err := s.ListScenarios(ctx, orgA, capstan.ScenarioFilter{Provides: "secret.store"})
	require.NoError(t, err)
	require.Empty(t, none)

	def, err := s.GetCapability(ctx, orgA, "object_storage.s3")
	require.NoError(t, err)
	require.Equal(t, "storage@1.10.0", def.Pack, "the newest version of the owning pack defines it")
	types, err := s.ListResourceTypes(ctx, orgA)
	require.NoError(t, err)
	require.Len(t, types, 1)
	pols, err := s.ListPolicies(ctx, orgA)
	require.NoError(t, err)
	require.Len(t, pols, 1)
}

func testCapabilityOwnership(t *testing.T, s capstan.Store) {
	installTestPack(t, s, orgA)
	other := &capstan.ScenarioPack{ID: "other", Version: "1.0.0", Capabilities: []capstan.CapabilityDefinition{
		{Key: "object_storage.s3", Category: "something else"},
	}}
	other.Digest = pack.Digest(other)
	_, err := s.InstallPack(ctx, orgA, other)
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "another pack may not redefine a capability differently")
	_, err = s.GetCapability(ctx, orgA, "nope")
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
}
