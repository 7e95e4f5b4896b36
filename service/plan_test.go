package service_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/pack"
	"github.com/capstan-dev/capstan/service"
)

// cyclePack: a.install needs cap.b, created only by b.install, which needs
// cap.a, created only by a.install.
const cyclePack = `id: cycle
version: 1.0.0
capabilities:
  - {key: cap.a, category: test}
  - {key: cap.b, category: test}
  - {key: cap.orphan, category: test}
scenarios:
  - id: a.install
    action: install
    target_resource_type: thing.a
    requires: [{id: b, capability: cap.b, strategy: existing-or-create}]
    provides: [{capability: cap.a}]
    plan: {nodes: [{id: go, type: verification, title: Go, probes: [{name: p, type: sim}]}]}
  - id: b.install
    action: install
    target_resource_type: thing.b
    requires: [{id: a, capability: cap.a, strategy: existing-or-create}]
    provides: [{capability: cap.b}]
    plan: {nodes: [{id: go, type: verification, title: Go, probes: [{name: p, type: sim}]}]}
  - id: lonely.install
    action: install
    target_resource_type: thing.lonely
    requires:
      - {id: nothing, capability: cap.orphan, strategy: existing-or-create}
      - {id: strict, capability: secret.store, strategy: existing, constraints: {environment: prod, engine: transit}}
      - {id: unset, capability: secret.store, strategy: existing, constraints: {environment: "${intent.missing}"}}
    plan: {nodes: [{id: go, type: verification, title: Go, probes: [{name: p, type: sim}]}]}
  - id: sloppy.install
    action: install
    target_resource_type: thing.sloppy
    requires:
      - {id: bucket, capability: object_storage.s3, strategy: existing-or-create, constraints: {environment: "${intent.environment}"}}
    plan: {nodes: [{id: go, type: verification, title: Go, probes: [{name: p, type: sim}]}]}
  - id: fresh.install
    action: install
    target_resource_type: thing.fresh
    editable: true
    requires:
      - {id: cluster, capability: kubernetes.cluster, strategy: existing, workload: true, constraints: {name: "${intent.cluster}", environment: "${intent.environment}"}}
      - {id: bucket, capability: object_storage.s3, strategy: create, create_with: minio.install@1.0.0, constraints: {environment: "${intent.environment}", region: same-as-workload, encryption: required}}
      - {id: secrets, capability: secret.store, strategy: explicit, constraints: {environment: "${intent.environment}"}}
    plan: {nodes: [{id: go, type: job, title: Go, requires: [bucket], job: {run: {runner: sim}, outputs: {evidence: [{name: p, type: sim}]}}}]}
`

func setup(t *testing.T) (*service.Service, capstan.Store) {
	t.Helper()
	store := testenv.Store(t)
	svc := testenv.Demo(t, store)
	_, err := svc.InstallPackYAML(testenv.Admin(testenv.Org), "cycle.yaml", []byte(cyclePack))
	require.NoError(t, err)
	return svc, store
}

func plan(t *testing.T, svc *service.Service, in service.IntentInput) *capstan.Plan {
	t.Helper()
	ctx := testenv.Admin(testenv.Org)
	i, err := svc.CreateIntent(ctx, in)
	require.NoError(t, err)
	p, err := svc.PlanIntent(ctx, i.ID)
	require.NoError(t, err)
	return p
}

func TestPlanningFailuresListEveryReason(t *testing.T) {
	svc, store := setup(t)
	prod := map[string]any{"environment": "prod", "cluster": "prod-k8s"}
	tests := []struct {
		name   string
		intent service.IntentInput
		want   []string
	}{
		{"cycle", service.IntentInput{Action: "install", TargetResourceType: "thing.a", Constraints: prod}, []string{
			"requirement b/a: no existing provider of cap.a qualifies and none of the 1 scenarios that provide it qualifies",
		}},
		{"nothing can meet it", service.IntentInput{Action: "install", TargetResourceType: "thing.lonely", Constraints: prod}, []string{
			"requirement nothing: no existing provider of cap.orphan qualifies and no scenario provides it",
			"requirement strict: no existing provider of secret.store qualifies (3 considered) and strategy existing does not allow creating one",
			"requirement unset: constraint environment refers to intent.missing, which the intent does not set",
		}},
		{"prod without required constraints", service.IntentInput{Action: "install", TargetResourceType: "thing.sloppy", Constraints: prod}, []string{
			"requirement bucket: a prod requirement of object_storage.s3 must set encryption, region: the capability requires it in production (invariant 12)",
		}},
		{"explicit without a provider", service.IntentInput{Action: "install", TargetResourceType: "thing.fresh", Constraints: prod}, []string{
			"requirement secrets: explicit provider  does not provide secret.store",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := count(t, store)
			p := plan(t, svc, tt.intent)
			require.Equal(t, capstan.PlanInvalid, p.Status)
			require.Equal(t, tt.want, p.Problems)
			require.Equal(t, before+1, count(t, store), "the invalid plan is stored whole, once")
			in, err := svc.Intent(testenv.Admin(testenv.Org), p.IntentID)
			require.NoError(t, err)
			require.Equal(t, capstan.IntentSubmitted, in.Status, "an invalid plan does not plan the intent")
		})
	}
	// The cycle is named in the rejected scenario candidate.
	p := plan(t, svc, tests[0].intent)
	b := p.Binding("b/a")
	require.Contains(t, b.Candidates[0].Reason, "cycle a.install@1.0.0 -> b.install@1.0.0 -> a.install@1.0.0")
	// Staging has no required constraints.
	staging := plan(t, svc, service.IntentInput{Action: "install", TargetResourceType: "thing.sloppy", Constraints: map[string]any{"environment": "staging"}})
	require.Equal(t, capstan.PlanReady, staging.Status, "%v", staging.Problems)
	require.Equal(t, "minio.instance/staging-storage", staging.Binding("bucket").Provider.ResourceKey)
}

func count(t *testing.T, store capstan.Store) int {
	t.Helper()
	n := 0
	intents, _, err := store.ListIntents(testenv.Admin(testenv.Org), testenv.Org, capstan.IntentFilter{Limit: 1000})
	require.NoError(t, err)
	for _, i := range intents {
		ps, err := store.ListPlans(testenv.Admin(testenv.Org), testenv.Org, i.ID)
		require.NoError(t, err)
		n += len(ps)
	}
	return n
}

func TestStrategiesCreateAndExplicit(t *testing.T) {
	svc, _ := setup(t)
	p := plan(t, svc, service.IntentInput{Action: "install", TargetResourceType: "thing.fresh",
		Constraints: map[string]any{"environment": "prod", "cluster": "prod-k8s"},
		Providers:   map[string]string{"secrets": "vault.instance/prod-vault"}})
	require.Equal(t, capstan.PlanReady, p.Status, "%v", p.Problems)
	bucket := p.Binding("bucket")
	require.Equal(t, capstan.BindingPendingSubOperation, bucket.Status)
	require.Equal(t, "strategy create: minio.install@1.0.0 will create a new provider of object_storage.s3", bucket.Reason)
	require.Equal(t, 1, len(bucket.Candidates), "create never considers existing providers")
	secrets := p.Binding("secrets")
	require.True(t, secrets.Explicit)
	require.Equal(t, "vault.instance/prod-vault", secrets.Provider.ResourceKey)
	require.Contains(t, secrets.Reason, "chosen explicitly by the user")

	// An explicit choice still has to pass constraints and policies.
	bad := plan(t, svc, service.IntentInput{Action: "install", TargetResourceType: "thing.fresh",
		Constraints: map[string]any{"environment": "prod", "cluster": "prod-k8s"},
		Providers:   map[string]string{"secrets": "vault.instance/scratch-vault"}})
	require.Equal(t, capstan.PlanInvalid, bad.Status)
	require.Contains(t, bad.Problems[0], "explicit provider vault.instance/scratch-vault does not qualify: rejected by policy prod-secrets-not-dev-mode")
}

func TestTemplateThatIsNotADAGMakesAnInvalidPlan(t *testing.T) {
	store := testenv.Store(t)
	svc := testenv.Demo(t, store)
	// Bypass the pack linter, as a corrupted or foreign install would.
	p := &capstan.ScenarioPack{ID: "loop", Version: "1.0.0", Scenarios: []capstan.Scenario{{
		ID: "loop.install", Version: "1.0.0", Action: "install", TargetResourceType: "thing.loop",
		Plan: capstan.PlanTemplate{Nodes: []capstan.PlanNode{
			{ID: "a", Type: capstan.NodeVerification, Title: "A", After: []string{"b"}, Probes: []capstan.Probe{{Name: "p", Type: "sim"}}},
			{ID: "b", Type: capstan.NodeVerification, Title: "B", After: []string{"a"}, Probes: []capstan.Probe{{Name: "p", Type: "sim"}}},
		}},
	}}}
	p.Digest = pack.Digest(p)
	_, err := store.InstallPack(testenv.Admin(testenv.Org), testenv.Org, p)
	require.NoError(t, err)
	got := plan(t, svc, service.IntentInput{Action: "install", TargetResourceType: "thing.loop", Constraints: map[string]any{"environment": "prod"}})
	require.Equal(t, capstan.PlanInvalid, got.Status)
	require.Len(t, got.Problems, 1)
	require.Contains(t, got.Problems[0], "closes a cycle")
}

func TestPlanningLeavesTheScenarioUntouched(t *testing.T) {
	store := testenv.Store(t)
	svc := testenv.Demo(t, store)
	ctx := testenv.Admin(testenv.Org)
	before, err := store.GetScenario(ctx, testenv.Org, "tempo.install@1.3.0")
	require.NoError(t, err)
	in := testenv.SeedIntent()
	in.Mode = capstan.ModeAdvanced
	p := plan(t, svc, in)
	_, err = svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{
		{Op: capstan.ChangeSetParameters, Node: "helm-install", Parameters: map[string]any{"replicas": 3}},
		{Op: capstan.ChangeInsertAfter, Node: "verify-tracing", Template: "smoke-test"},
	})
	require.NoError(t, err)
	after, err := store.GetScenario(ctx, testenv.Org, "tempo.install@1.3.0")
	require.NoError(t, err)
	require.Equal(t, before, after, "invariant 2: a scenario holds no runtime state and planning never writes it")
}

// TestPlanningPagesThroughPolicyRejections fills the catalog with MinIOs
// that meet every constraint of the seed's object storage but are shared,
// which the prod policy rejects: the planner reads pages of candidates in
// rank order until a dedicated one is accepted, lists what it judged and
// counts the rest; an explicit choice ranked far below is still found.
func TestPlanningPagesThroughPolicyRejections(t *testing.T) {
	svc, store := setup(t)
	ctx := testenv.Admin(testenv.Org)
	var rs []*capstan.Resource
	minio := func(name, mode string) *capstan.Resource {
		return &capstan.Resource{Type: "minio.instance", Name: name, Environment: "prod", LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
			ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "object_storage.s3", Scope: map[string]any{"region": "eu-central"},
				Attributes: map[string]any{"encryption": "required", "access_mode": mode}}}}
	}
	for i := range 25 {
		rs = append(rs, minio(fmt.Sprintf("a-shared-%02d", i), "shared"))
	}
	for i := range 20 {
		rs = append(rs, minio(fmt.Sprintf("b-dedicated-%02d", i), "dedicated"))
	}
	_, err := store.ImportResources(ctx, testenv.Org, rs)
	require.NoError(t, err)

	p := plan(t, svc, testenv.SeedIntent())
	b := p.Binding("object-storage")
	require.Equal(t, capstan.BindingResolved, b.Status, b.Reason)
	require.Equal(t, "minio.instance/b-dedicated-00", b.Provider.ResourceKey)
	// The demo's shared-prod-storage passes too (46 pass) and ranks last;
	// two pages of 20 were judged.
	require.Equal(t, 46-40, b.RankedBelow)
	require.Contains(t, b.Reason, "; 6 more meet every constraint and rank below")
	rejected := 0
	for _, c := range b.Candidates {
		if strings.HasPrefix(c.Reason, "rejected by policy") {
			rejected++
		}
	}
	require.Equal(t, 25, rejected, "every shared MinIO of both pages was judged by the policy")

	in := testenv.SeedIntent()
	in.Providers = map[string]string{"object-storage": "minio.instance/b-dedicated-19"}
	explicit := plan(t, svc, in).Binding("object-storage")
	require.Equal(t, capstan.BindingResolved, explicit.Status, explicit.Reason)
	require.Equal(t, "minio.instance/b-dedicated-19", explicit.Provider.ResourceKey, "an explicit choice is found wherever it ranks")
}

// makerPack installs cap.made, created by made.one or made.two, and
// consumers whose requirement names which one creates it (create_with).
func makerPack(version string) string {
	return `id: maker
version: ` + version + `
capabilities:
  - {key: cap.made, category: test}
scenarios:
  - id: made.one
    action: install
    target_resource_type: thing.made
    provides: [{capability: cap.made}]
    plan: {nodes: [{id: go, type: verification, title: Go ` + version + `, probes: [{name: p, type: sim}]}]}
  - id: made.two
    action: install
    target_resource_type: thing.made
    provides: [{capability: cap.made}]
    plan: {nodes: [{id: go, type: verification, title: Go, probes: [{name: p, type: sim}]}]}
  - id: use.any
    action: install
    target_resource_type: thing.any
    requires: [{id: made, capability: cap.made, strategy: create}]
    plan: {nodes: [{id: go, type: verification, title: Go, probes: [{name: p, type: sim}]}]}
  - id: use.old
    action: install
    target_resource_type: thing.old
    requires: [{id: made, capability: cap.made, strategy: existing-or-create, create_with: made.one@1.0.0}]
    plan: {nodes: [{id: go, type: verification, title: Go, probes: [{name: p, type: sim}]}]}
  - id: use.two
    action: install
    target_resource_type: thing.two
    requires: [{id: made, capability: cap.made, strategy: create, create_with: made.two}]
    plan: {nodes: [{id: go, type: verification, title: Go, probes: [{name: p, type: sim}]}]}
  - id: use.none
    action: install
    target_resource_type: thing.none
    requires: [{id: made, capability: cap.made, strategy: create, create_with: made.three}]
    plan: {nodes: [{id: go, type: verification, title: Go, probes: [{name: p, type: sim}]}]}
`
}

func TestARequirementNamesTheScenarioThatCreatesItsProvider(t *testing.T) {
	svc, _ := setup(t)
	for _, v := range []string{"1.0.0", "2.0.0"} {
		_, err := svc.InstallPackYAML(testenv.Admin(testenv.Org), "maker.yaml", []byte(makerPack(v)))
		require.NoError(t, err)
	}
	staging := map[string]any{"environment": "staging"}
	for _, tc := range []struct {
		target, want, problem string
	}{
		{"thing.any", "", ""}, // either scenario, its newest version
		{"thing.old", "made.one@1.0.0", ""},
		{"thing.two", "made.two@2.0.0", ""},
		{"thing.none", "", "requirement made: no existing provider of cap.made qualifies and create_with made.three names no installed scenario that provides it"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			p := plan(t, svc, service.IntentInput{Action: "install", TargetResourceType: tc.target, Constraints: staging})
			if tc.problem != "" {
				require.Equal(t, []string{tc.problem}, p.Problems)
				return
			}
			require.Equal(t, capstan.PlanReady, p.Status, "%v", p.Problems)
			b := p.Binding("made")
			require.Equal(t, capstan.BindingPendingSubOperation, b.Status)
			if tc.want == "" {
				require.Contains(t, []string{"made.one@2.0.0", "made.two@2.0.0"}, b.SubOperation.Scenario)
				return
			}
			require.Equal(t, tc.want, b.SubOperation.Scenario)
			require.Len(t, b.Candidates, 1, "only the named scenario is a candidate")
		})
	}
}

func TestCreateWithIsChecked(t *testing.T) {
	for _, tc := range []struct{ req, want string }{
		{"{id: made, capability: cap.made, strategy: existing, create_with: made.one}", "strategy existing never creates a provider"},
		{"{id: made, capability: cap.made, strategy: create, create_with: 'Made One'}", "is not a scenario id or ref"},
		{"{id: made, capability: cap.made, strategy: create, create_with: made.one@1.x}", "is not a scenario id or ref"},
	} {
		doc := "id: bad\nversion: 1.0.0\ncapabilities: [{key: cap.made, category: test}]\nscenarios:\n  - id: bad.install\n    action: install\n    target_resource_type: thing.bad\n    requires: [" +
			tc.req + "]\n    plan: {nodes: [{id: go, type: verification, title: Go, probes: [{name: p, type: sim}]}]}\n"
		_, problems := pack.Parse("bad.yaml", []byte(doc), nil)
		require.Contains(t, fmt.Sprint(problems), tc.want)
	}
}

func TestProvidedPlaceholdersAreChecked(t *testing.T) {
	for _, tc := range []struct{ attrs, want string }{
		{"{endpoint: 'http://${binding.nowhere.address}:7070'}", "${binding.nowhere.address} names no requirement of the scenario"},
		{"{key: '${artifact.missing}'}", "${artifact.missing} names no job's output artifact"},
		{"{key: '${artifact.values}'}", "${artifact.values} is not a secret artifact"},
		{"{key: '${intent.name}'}", "a placeholder here is ${binding.REQUIREMENT.ATTRIBUTE} or ${artifact.NAME}"},
	} {
		doc := `id: bad
version: 1.0.0
capabilities: [{key: cap.made, category: test}]
scenarios:
  - id: bad.install
    action: install
    target_resource_type: thing.bad
    requires: [{id: host, capability: linux.host, strategy: existing}]
    provides: [{capability: cap.made, attributes: ` + tc.attrs + `}]
    plan: {nodes: [{id: go, type: job, title: Go, job: {run: {runner: sim}, outputs: {artifacts: [{name: values, type: x, sensitivity: internal}, {name: key, type: x, sensitivity: secret}]}}}]}
`
		_, problems := pack.Parse("bad.yaml", []byte(doc), map[string]*capstan.CapabilityDefinition{"linux.host": {Key: "linux.host", Category: "compute"}})
		require.Contains(t, fmt.Sprint(problems), tc.want)
	}
}
