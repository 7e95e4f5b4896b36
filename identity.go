package capstan

import (
	"context"
	"slices"
)

// Roles.
const (
	RoleAdmin         = "admin"
	RolePlatformAdmin = "platform_admin"
	RoleSRE           = "sre"
	RoleOperator      = "operator"
	RoleViewer        = "viewer"
)

// BuiltinRoles are the roles Capstan itself knows; a tokens file declares
// any other role it grants (gates and policies of packs may ask for them).
var BuiltinRoles = []string{RoleAdmin, RolePlatformAdmin, RoleSRE, RoleOperator, RoleViewer}

// Actor is an authenticated caller: who, in which organization, with which roles.
type Actor struct {
	ID             string   `json:"actor"`
	OrganizationID string   `json:"organization"`
	Roles          []string `json:"roles"`
}

// HasRole reports whether the actor holds one of roles (admin holds all).
func (a *Actor) HasRole(roles ...string) bool {
	if slices.Contains(a.Roles, RoleAdmin) {
		return true
	}
	for _, r := range roles {
		if slices.Contains(a.Roles, r) {
			return true
		}
	}
	return false
}

type actorKey struct{}

// WithActor returns a context carrying the actor.
func WithActor(ctx context.Context, a *Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the context's actor or an EUNAUTHENTICATED error.
func ActorFrom(ctx context.Context) (*Actor, error) {
	a, _ := ctx.Value(actorKey{}).(*Actor)
	if a == nil || a.OrganizationID == "" {
		return nil, Errorf(EUNAUTHENTICATED, "no valid token")
	}
	return a, nil
}
