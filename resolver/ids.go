package resolver

import "github.com/capstan-dev/capstan"

// Global id kinds (capstan.GlobalID is the one encoding).
const (
	kindResource     = capstan.KindResource
	kindResourceType = capstan.KindResourceType
	kindCapability   = capstan.KindCapability
	kindPack         = capstan.KindPack
	kindScenario     = capstan.KindScenario
	kindIntent       = capstan.KindIntent
	kindPlan         = capstan.KindPlan
)

// globalID encodes an entity kind and its local id into an opaque id.
func globalID(kind, id string) string { return capstan.GlobalID(kind, id) }

// parseID decodes a global id; want, when set, is the kind it must be.
func parseID(gid, want string) (kind, id string, err error) { return capstan.ParseGlobalID(gid, want) }

// localID decodes a global id of kind want.
func localID(gid, want string) (string, error) {
	_, id, err := parseID(gid, want)
	return id, err
}
