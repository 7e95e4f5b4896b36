package policy_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/policy"
)

func TestEvaluate(t *testing.T) {
	set, err := policy.CompileAll([]*capstan.Policy{
		{ID: "dedicated", Description: "prod storage is dedicated", Capability: "s3", When: "intent.environment == 'prod'",
			Require: "'access_mode' in provider.attributes && provider.attributes.access_mode == 'dedicated'"},
		{ID: "big", Description: "at least 100 GB", Require: "provider.attributes.size >= 100"},
	})
	require.NoError(t, err)
	in := func(env string, attrs map[string]any) policy.Input {
		return policy.Input{Intent: map[string]any{"environment": env}, Requirement: map[string]any{}, Provider: map[string]any{"attributes": attrs}}
	}
	tests := []struct {
		name  string
		cap   string
		input policy.Input
		want  []capstan.PolicyVerdict
	}{
		{"prod dedicated passes both", "s3", in("prod", map[string]any{"access_mode": "dedicated", "size": 200}), []capstan.PolicyVerdict{
			{Policy: "big", Passed: true, Reason: "big: satisfied"}, {Policy: "dedicated", Passed: true, Reason: "dedicated: satisfied"}}},
		{"prod shared fails", "s3", in("prod", map[string]any{"access_mode": "shared", "size": 200}), []capstan.PolicyVerdict{
			{Policy: "big", Passed: true, Reason: "big: satisfied"}, {Policy: "dedicated", Passed: false, Reason: "dedicated: prod storage is dedicated"}}},
		{"staging skips the prod policy", "s3", in("staging", map[string]any{"size": 200}), []capstan.PolicyVerdict{
			{Policy: "big", Passed: true, Reason: "big: satisfied"}}},
		{"other capability skips it too", "db", in("prod", map[string]any{"size": 5}), []capstan.PolicyVerdict{
			{Policy: "big", Passed: false, Reason: "big: at least 100 GB"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, set.Evaluate(tt.cap, tt.input))
		})
	}
	// A missing attribute is a failed policy with the evaluation error, never a pass.
	got := set.Evaluate("db", in("prod", map[string]any{}))
	require.False(t, got[0].Passed)
	require.Contains(t, got[0].Reason, "no such key")
}

func TestCompileRejectsBadExpressions(t *testing.T) {
	for expr, want := range map[string]string{
		"provider.attributes +": "require expression",
		"1 + 1":                 "must be bool",
		"nope == 1":             "undeclared reference",
	} {
		_, err := policy.Compile(capstan.Policy{ID: "p", Description: "d", Require: expr})
		require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), expr)
		require.Contains(t, err.Error(), want, expr)
	}
}

// TestExplainSaysWhyAPolicyFails: a failing candidate's reason is the
// description followed by what explain says, from the same variables;
// a passing one never evaluates it, and an explain that cannot be
// evaluated says so instead of hiding the failure.
func TestExplainSaysWhyAPolicyFails(t *testing.T) {
	set, err := policy.CompileAll([]*capstan.Policy{{ID: "dedicated", Description: "Storage serves one workload.",
		Require: "provider.attributes.access_mode == 'dedicated' && size(provider.consumers) == 0",
		Explain: "provider.attributes.access_mode != 'dedicated' ? 'its access_mode is ' + string(provider.attributes.access_mode) : 'it already serves ' + provider.consumers.join(', ')"}})
	require.NoError(t, err)
	provider := func(mode any, consumers any) policy.Input {
		return policy.Input{Intent: map[string]any{}, Requirement: map[string]any{},
			Provider: map[string]any{"attributes": map[string]any{"access_mode": mode}, "consumers": consumers}}
	}
	for name, tt := range map[string]struct {
		in     policy.Input
		passed bool
		reason string
	}{
		"dedicated and unused":        {provider("dedicated", []string{}), true, "dedicated: satisfied"},
		"shared":                      {provider("shared", []string{}), false, "dedicated: Storage serves one workload: its access_mode is shared."},
		"dedicated to another":        {provider("dedicated", []string{"tempo.instance/prod-tempo"}), false, "dedicated: Storage serves one workload: it already serves tempo.instance/prod-tempo."},
		"dedicated to two others":     {provider("dedicated", []string{"a.b/c", "a.b/d"}), false, "dedicated: Storage serves one workload: it already serves a.b/c, a.b/d."},
		"explain cannot be evaluated": {provider("dedicated", []any{1}), false, "dedicated: Storage serves one workload (explain could not be evaluated: "},
		"a long explanation is cut":   {provider("dedicated", []string{strings.Repeat("x", 2000)}), false, "dedicated: Storage serves one workload: it already serves " + strings.Repeat("x", 500-len("it already serves ")) + "…."},
	} {
		t.Run(name, func(t *testing.T) {
			got := set.Evaluate("s3", tt.in)
			require.Len(t, got, 1)
			require.Equal(t, tt.passed, got[0].Passed)
			require.True(t, strings.HasPrefix(got[0].Reason, tt.reason), "%q", got[0].Reason)
		})
	}
	for expr, want := range map[string]string{
		"1 + 1":      "explain expression must be string",
		"'a' +":      "explain expression",
		"nope + 'x'": "undeclared reference",
	} {
		_, err := policy.Compile(capstan.Policy{ID: "p", Description: "d", Require: "true", Explain: expr})
		require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), expr)
		require.Contains(t, err.Error(), want, expr)
	}
}
