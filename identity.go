package capstan

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// SystemActors are the actor ids Capstan itself writes: the executor's
// steps, and capstan for what no person did (a patch another one made
// stale). Analyzers write AgentPrefix + their name.
var SystemActors = []string{"executor", "capstan", AssessorActor}

// CheckPersonActor says why id cannot name a person (a token's actor):
// one the product gives its own parts or analyzers, compared without case
// and around spaces, so no token passes for the executor or an analyzer,
// or one with anything but ASCII letters, digits and . _ @ + - (spaces,
// control characters, zero-width or look-alike letters), which would look
// like another person in a timeline.
func CheckPersonActor(id string) error {
	if id == "" {
		return fmt.Errorf("actor is empty")
	}
	folded := strings.ToLower(strings.TrimSpace(id))
	if strings.HasPrefix(folded, AgentPrefix) || strings.HasPrefix(folded, strings.TrimSuffix(AgentPrefix, ":")) {
		return fmt.Errorf("actor %q is reserved: %s<name> names an analyzer, never a person", id, AgentPrefix)
	}
	if slices.Contains(SystemActors, folded) {
		return fmt.Errorf("actor %q is reserved for Capstan itself", id)
	}
	if strings.IndexFunc(id, notActorRune) >= 0 || len(id) > 128 {
		return fmt.Errorf("actor %q is not a login: at most 128 of the ASCII letters, digits and . _ @ + - (a look-alike letter or an invisible one would pass for another person in a timeline)", id)
	}
	return nil
}

// notActorRune reports whether r may not appear in a person's actor id.
func notActorRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("._@+-", r)
}
