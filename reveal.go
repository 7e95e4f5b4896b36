package capstan

import "time"

// RevealWindow is how long a revealed secret value is valid for its
// reader: clients show it, then drop it (the console masks it again).
const RevealWindow = 5 * time.Minute

// RevealRoles are the roles that may reveal a secret artifact of an
// operation (invariant 10): in production only admins, elsewhere also
// SREs. Operators and viewers never see a secret value.
func RevealRoles(production bool) []string {
	if production {
		return []string{RoleAdmin, RolePlatformAdmin}
	}
	return []string{RoleAdmin, RolePlatformAdmin, RoleSRE}
}

// MayReveal decides whether a may reveal a secret artifact of an
// operation (in production or not), with the reason it gave: EFORBIDDEN without
// one of RevealRoles, EINVALID without a reason (every reveal is
// audited with it).
func MayReveal(a *Actor, production bool, reason string) error {
	if len(reason) < 3 || len(reason) > 500 {
		return Errorf(EINVALID, "a reveal needs a reason of 3 to 500 characters: it is recorded in the operation's timeline")
	}
	return MayRevealIn(a, production)
}

// MayRevealIn is MayReveal's role check alone: whether a may reveal a
// secret artifact of an operation (given a reason).
func MayRevealIn(a *Actor, production bool) error {
	if roles := RevealRoles(production); !a.HasRole(roles...) {
		where := "outside production"
		if production {
			where = "in production"
		}
		return Errorf(EFORBIDDEN, "revealing a secret %s needs one of the roles %v", where, roles)
	}
	return nil
}
