package capstan_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// Invariant 1: Resource and Operation are different entities. A resource
// only points at operations; it has no operation status of its own.
func TestInvariant1ResourceIsNotAnOperation(t *testing.T) {
	rt := reflect.TypeOf(capstan.Resource{})
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		require.NotEqual(t, reflect.TypeOf(capstan.OperationStatus("")), f.Type, "resource field %s holds operation status", f.Name)
		require.NotEqual(t, reflect.TypeOf(capstan.Operation{}), f.Type, "resource field %s embeds an operation", f.Name)
	}
	_, hasActive := rt.FieldByName("ActiveOperationID")
	require.True(t, hasActive)
	// A resource's lifecycle cannot be set to an operation status.
	r := validResource()
	r.LifecycleStatus = capstan.LifecycleStatus(capstan.OperationRunning)
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(r.Validate()))
}

// Invariant 2: a scenario template holds no runtime state: no field of a
// Scenario or of anything it contains has a runtime status type.
func TestInvariant2ScenarioHasNoRuntimeState(t *testing.T) {
	runtime := map[reflect.Type]bool{
		reflect.TypeOf(capstan.OperationStatus("")): true, reflect.TypeOf(capstan.NodeRunStatus("")): true,
		reflect.TypeOf(capstan.PlanStatus("")): true, reflect.TypeOf(capstan.BindingStatus("")): true,
		reflect.TypeOf(capstan.Evidence{}): true, reflect.TypeOf(capstan.Artifact{}): true,
	}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if seen[typ] || typ.Kind() != reflect.Struct {
			return
		}
		seen[typ] = true
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			ft := f.Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			require.False(t, runtime[ft], "%s.%s is runtime state", path, f.Name)
			walk(f.Type, path+"."+f.Name)
		}
	}
	walk(reflect.TypeOf(capstan.Scenario{}), "Scenario")
}

// Invariant 3: a plan is a scenario made concrete for one intent.
func TestInvariant3PlanBelongsToIntentAndScenario(t *testing.T) {
	p := &capstan.Plan{ScenarioRef: "tempo.install@1.3.0", Status: capstan.PlanReady,
		Customizations: capstan.Customizations{BaseTemplate: "tempo.install@1.3.0"}}
	require.ErrorContains(t, p.Validate(), "invariant 3")
	p.IntentID = "i1"
	require.NoError(t, p.Validate())
	p.ScenarioRef = ""
	require.ErrorContains(t, p.Validate(), "invariant 3")
	p.ScenarioRef = "tempo.install@1.3.0"
	p.Customizations.BaseTemplate = "other@1.0.0"
	require.Error(t, p.Validate())
}

// Invariant 6: a requirement names no provider unless the user chose it.
func TestInvariant6NoProviderBeforeResolution(t *testing.T) {
	def := &capstan.CapabilityDefinition{Key: "secret.store", Category: "security"}
	req := capstan.CapabilityRequirement{ID: "secrets", Capability: "secret.store", Strategy: capstan.StrategyExisting, Provider: "vault.instance/prod-vault"}
	require.ErrorContains(t, req.Validate(def), "invariant 6")
	req.Strategy = capstan.StrategyExplicit
	require.NoError(t, req.Validate(def))

	// A scenario template may never name one, not even as explicit.
	sc := capstan.Scenario{ID: "x.install", Version: "1.0.0", Action: "install", TargetResourceType: "x",
		Requires: []capstan.CapabilityRequirement{req},
		Plan:     capstan.PlanTemplate{Nodes: []capstan.PlanNode{{ID: "v", Type: capstan.NodeVerification, Title: "V", Probes: []capstan.Probe{{Name: "p", Type: "sim"}}}}}}
	err := sc.Validate(map[string]*capstan.CapabilityDefinition{"secret.store": def})
	require.ErrorContains(t, err, "invariant 6")

	// A binding whose requirement names a provider must be explicit.
	b := capstan.ResourceBinding{ID: "secrets", Requirement: req, Status: capstan.BindingResolved, Reason: "r",
		Provider: &capstan.BoundProvider{ResourceKey: "vault.instance/prod-vault"}}
	require.ErrorContains(t, b.Validate(), "invariant 6")
	b.Explicit = true
	require.NoError(t, b.Validate())
}

// Invariant 7: a binding says why its provider was chosen and why each
// other candidate was not.
func TestInvariant7BindingExplains(t *testing.T) {
	b := capstan.ResourceBinding{ID: "cluster", Status: capstan.BindingResolved,
		Provider: &capstan.BoundProvider{ResourceKey: "kubernetes.cluster/prod-k8s"}}
	require.ErrorContains(t, b.Validate(), "invariant 7")
	b.Reason = "the only active prod cluster"
	b.Candidates = []capstan.CandidateVerdict{{Ref: "kubernetes.cluster/staging-k8s"}}
	require.ErrorContains(t, b.Validate(), "invariant 7")
	b.Candidates[0].Reason = "rejected: environment: want prod, got staging"
	require.NoError(t, b.Validate())
	// A plan with an unexplained binding is invalid as a whole.
	p := &capstan.Plan{IntentID: "i", ScenarioRef: "s@1.0.0", Status: capstan.PlanReady,
		Customizations: capstan.Customizations{BaseTemplate: "s@1.0.0"}, Bindings: []capstan.ResourceBinding{{ID: "x", Status: capstan.BindingResolved, Provider: &capstan.BoundProvider{}}}}
	require.ErrorContains(t, p.Validate(), "invariant 7")
}

// Invariant 12: a prod requirement missing a constraint the capability marks
// required in prod is rejected.
func TestInvariant12ProdConstraints(t *testing.T) {
	def := &capstan.CapabilityDefinition{Key: "object_storage.s3", Category: "storage", ConstraintSchema: map[string]capstan.ConstraintSpec{
		"region":     {Type: "string", RequiredInProd: true},
		"encryption": {Type: "string", Enum: []any{"required", "optional"}, RequiredInProd: true},
		"size":       {Type: "integer", Match: capstan.MatchMinimum},
	}}
	req := capstan.CapabilityRequirement{ID: "s3", Capability: def.Key, Strategy: capstan.StrategyExisting, Constraints: map[string]any{"region": "eu"}}
	require.Equal(t, []string{"encryption"}, req.MissingInProd(def))
	req.Constraints["encryption"] = "required"
	require.Empty(t, req.MissingInProd(def))
	req.Constraints["encryption"] = "sometimes"
	require.ErrorContains(t, req.Validate(def), "not one of")
	req.Constraints["encryption"] = "required"
	req.Constraints["size"] = "big"
	require.ErrorContains(t, req.Validate(def), "not of type integer")
	req.Constraints["size"] = 10
	req.Constraints["color"] = "red"
	require.ErrorContains(t, req.Validate(def), "not defined")
}

func TestCheckConstraint(t *testing.T) {
	minimum := capstan.ConstraintSpec{Type: "integer", Match: capstan.MatchMinimum}
	maximum := capstan.ConstraintSpec{Type: "number", Match: capstan.MatchMaximum}
	exact := capstan.ConstraintSpec{Type: "string"}
	tests := []struct {
		name      string
		spec      capstan.ConstraintSpec
		want, got any
		present   bool
		passed    bool
	}{
		{"exact match", exact, "eu", "eu", true, true},
		{"exact mismatch", exact, "eu", "us", true, false},
		{"missing", exact, "eu", nil, false, false},
		{"minimum met", minimum, 100, 500.0, true, true},
		{"minimum equal", minimum, 100, 100, true, true},
		{"minimum not met", minimum, 100, 50, true, false},
		{"minimum non numeric", minimum, 100, "lots", true, false},
		{"maximum met", maximum, 2.5, 1, true, true},
		{"maximum exceeded", maximum, 2.5, 3, true, false},
		{"one of", exact, []any{"debian", "ubuntu"}, "ubuntu", true, true},
		{"not one of", exact, []any{"debian", "ubuntu"}, "rhel", true, false},
		{"number kinds", capstan.ConstraintSpec{Type: "integer"}, 3, 3.0, true, true},
		{"bool vs string", capstan.ConstraintSpec{Type: "boolean"}, true, "true", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := capstan.CheckConstraint("k", tt.spec, tt.want, tt.got, tt.present)
			require.Equal(t, tt.passed, c.Passed, c.Reason)
			require.True(t, strings.HasPrefix(c.Reason, "k: "), c.Reason)
		})
	}
}

func TestImplyingCapabilities(t *testing.T) {
	defs := map[string]*capstan.CapabilityDefinition{
		"kubernetes.cluster": {Key: "kubernetes.cluster", Implies: []string{"workload.runtime"}},
		"workload.runtime":   {Key: "workload.runtime", Implies: []string{"compute"}},
		"openshift":          {Key: "openshift", Implies: []string{"kubernetes.cluster"}},
		"compute":            {Key: "compute"},
	}
	got := capstan.ImplyingCapabilities(defs, "compute", 4)
	require.Equal(t, []capstan.ImpliedSource{
		{Capability: "compute"},
		{Capability: "workload.runtime", Via: []string{"workload.runtime", "compute"}},
		{Capability: "kubernetes.cluster", Via: []string{"kubernetes.cluster", "workload.runtime", "compute"}},
		{Capability: "openshift", Via: []string{"openshift", "kubernetes.cluster", "workload.runtime", "compute"}},
	}, got)
	require.Len(t, capstan.ImplyingCapabilities(defs, "compute", 1), 2, "depth bounds the walk")
}

func TestValidation(t *testing.T) {
	r := validResource()
	require.NoError(t, r.Validate())
	r.Relationships = append(r.Relationships, capstan.Relationship{Type: "owns", Target: "no-slash"})
	err := r.Validate()
	require.Len(t, capstan.ErrorDetails(err), 2, "every problem is listed: %v", err)

	in := &capstan.Intent{Actor: "a", Action: "install", TargetResourceType: "tempo.instance", Mode: "simple", Status: capstan.IntentDraft,
		Constraints: map[string]any{"environment": 5}}
	require.ErrorContains(t, in.Validate(), "environment")
	require.Error(t, in.Move(capstan.IntentPlanned))
	require.NoError(t, in.Move(capstan.IntentSubmitted))
}

func validResource() *capstan.Resource {
	return &capstan.Resource{Type: "kubernetes.cluster", Name: "prod-k8s", Environment: "prod",
		LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
		ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "kubernetes.cluster"}},
		Relationships:        []capstan.Relationship{{Type: capstan.RelRunsOn, Target: "compute.node/n1"}}}
}
