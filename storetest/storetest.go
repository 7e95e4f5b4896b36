// Package storetest is the behaviour contract of capstan.Store: one suite
// that every store implementation runs unchanged. A store bug gets a failing
// case here before its fix.
package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// Opener returns a fresh, empty store for one test case.
type Opener func(t *testing.T) capstan.Store

// Run runs every conformance case against stores from open.
func Run(t *testing.T, open Opener) {
	cases := []struct {
		name string
		fn   func(*testing.T, capstan.Store)
	}{
		{"ResourceCRUD", testResourceCRUD},
		{"StaleVersionIsConflict", testStaleVersion},
		{"ConcurrentWritersOneConflict", testConcurrentWriters},
		{"ImportUpsertsByKey", testImportUpserts},
		{"ImportIsAtomic", testImportAtomic},
		{"ListResourcesPagesAndFilters", testListResources},
		{"OrganizationIsolation", testOrgIsolation},
		{"PackInstallIsImmutable", testPackImmutable},
		{"ScenarioVersions", testScenarioVersions},
		{"CapabilityOwnedByOnePack", testCapabilityOwnership},
		{"FindCandidates", testFindCandidates},
		{"CandidateConsumers", testCandidateConsumers},
		{"CandidatePages", testCandidatePages},
		{"CandidatesMatchReference", testCandidatesMatchReference},
		{"TopologyValue", testTopology},
		{"Dependencies", testDependencies},
		{"Paths", testPaths},
		{"IntentAndPlan", testIntentAndPlan},
		{"CreatePlanIsAtomic", testCreatePlanAtomic},
		{"SeedExamplePlan", testSeedExample},
		{"StartOperation", testStartOperation},
		{"OperationChanges", testOperationChanges},
		{"Commands", testCommands},
		{"ConcurrentOperationSteps", testConcurrentOperationSteps},
		{"ManyOperationsStepAtOnce", testManyOperationsStepAtOnce},
		{"ListOperationsFilters", testListOperationsFilters},
		{"StartOperationWritesItsIntent", testStartOperationWritesItsIntent},
		{"OperationChangeCommitsWhatFollows", testOperationChangeCommitsWhatFollows},
		{"OperationChangeIsAtomic", testOperationChangeIsAtomic},
		{"CreatePlanSupersedes", testCreatePlanSupersedes},
		{"PlanRevisions", testPlanRevisions},
		{"PlanPatches", testPlanPatches},
		{"ConcurrentPatchDecisions", testConcurrentPatchDecisions},
		{"ProviderBindings", testProviderBindings},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Fresh organizations per case: a shared server (NEO4J_URI)
			// needs no wiping, and isolation is tested on every case.
			suffix := capstan.NewID()[12:]
			orgA, orgB = "org-a-"+suffix, "org-b-"+suffix
			c.fn(t, open(t))
		})
	}
}

var ctx = context.Background()

// The organizations of the running case (cases run one at a time).
var orgA, orgB string

func resource(typ, name, env string, caps ...capstan.ProvidedCapability) *capstan.Resource {
	return &capstan.Resource{Type: typ, Name: name, Environment: env, LifecycleStatus: capstan.LifecycleActive,
		HealthStatus: capstan.HealthHealthy, ProvidedCapabilities: caps}
}

func provides(capability string, scope, attrs map[string]any) capstan.ProvidedCapability {
	return capstan.ProvidedCapability{Capability: capability, Scope: scope, Attributes: attrs}
}

// requireStale checks that err is the conflict of a stale write: CONFLICT,
// with capstan.ErrStale as its cause (steering decides again on it).
func requireStale(t *testing.T, err error, what string) {
	t.Helper()
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "%s: %v", what, err)
	require.True(t, capstan.IsStale(err), "%s is a stale write: %v", what, err)
}
