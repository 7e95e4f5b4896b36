package policy_test

import (
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
