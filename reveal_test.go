package capstan_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestMayReveal(t *testing.T) {
	actor := func(roles ...string) *capstan.Actor {
		return &capstan.Actor{ID: "a", OrganizationID: "o", Roles: roles}
	}
	tests := []struct {
		name   string
		actor  *capstan.Actor
		env    string
		reason string
		code   string
	}{
		{"admin in prod", actor(capstan.RoleAdmin), "prod", "incident 42", ""},
		{"platform admin in prod", actor(capstan.RolePlatformAdmin), "production", "incident 42", ""},
		{"sre in prod", actor(capstan.RoleSRE), "prod", "incident 42", capstan.EFORBIDDEN},
		{"sre in staging", actor(capstan.RoleSRE), "staging", "debugging", ""},
		{"operator in staging", actor(capstan.RoleOperator), "staging", "debugging", capstan.EFORBIDDEN},
		{"viewer anywhere", actor(capstan.RoleViewer), "dev", "curious", capstan.EFORBIDDEN},
		{"no reason", actor(capstan.RoleAdmin), "dev", "", capstan.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.code, capstan.ErrorCode(capstan.MayReveal(tc.actor, capstan.DefaultProductionEnvironments.Is(tc.env), tc.reason)))
		})
	}
}
