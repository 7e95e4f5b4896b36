package resolver

import (
	"encoding/base64"
	"strings"

	"github.com/capstan-dev/capstan"
)

// Global id kinds.
const (
	kindResource     = "Resource"
	kindResourceType = "ResourceType"
	kindCapability   = "CapabilityDefinition"
	kindPack         = "ScenarioPack"
	kindScenario     = "Scenario"
	kindIntent       = "Intent"
	kindPlan         = "Plan"
)

// globalID encodes an entity kind and its local id into an opaque id.
func globalID(kind, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + id))
}

// parseID decodes a global id; want, when set, is the kind it must be.
func parseID(gid, want string) (kind, id string, err error) {
	raw, decErr := base64.RawURLEncoding.DecodeString(gid)
	kind, id, ok := strings.Cut(string(raw), ":")
	if decErr != nil || !ok || id == "" {
		return "", "", capstan.Errorf(capstan.EINVALID, "%q is not a Capstan id", gid)
	}
	if want != "" && kind != want {
		return "", "", capstan.Errorf(capstan.EINVALID, "id %q is a %s, not a %s", gid, kind, want)
	}
	return kind, id, nil
}

// localID decodes a global id of kind want.
func localID(gid, want string) (string, error) {
	_, id, err := parseID(gid, want)
	return id, err
}
