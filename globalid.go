package capstan

import (
	"encoding/base64"
	"strings"
)

// Global id kinds: every entity the API shows by id.
const (
	KindResource     = "Resource"
	KindResourceType = "ResourceType"
	KindCapability   = "CapabilityDefinition"
	KindPack         = "ScenarioPack"
	KindScenario     = "Scenario"
	KindIntent       = "Intent"
	KindPlan         = "Plan"
	KindOperation    = "Operation"
	KindPatch        = "PlanPatch"
	// KindArtifact's local id is <operation id>/<artifact id>.
	KindArtifact = "Artifact"
)

// GlobalID is the one form of an id the product shows — GraphQL fields,
// timeline payloads, evidence sources, error messages, `capstan watch` —
// and the form the API accepts: base64url(kind:localId), opaque to
// clients.
func GlobalID(kind, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + id))
}

// OperationGID is the global id of an operation ("" for none).
func OperationGID(id string) string {
	if id == "" {
		return ""
	}
	return GlobalID(KindOperation, id)
}

// PatchGID is the global id of a PlanPatch ("" for none).
func PatchGID(id string) string {
	if id == "" {
		return ""
	}
	return GlobalID(KindPatch, id)
}

// ArtifactGID is the global id of an operation's artifact.
func ArtifactGID(operationID, id string) string {
	return GlobalID(KindArtifact, operationID+"/"+id)
}

// ParseArtifactGID returns the operation and artifact an artifact's
// global id names.
func ParseArtifactGID(gid string) (operationID, id string, err error) {
	_, local, err := ParseGlobalID(gid, KindArtifact)
	if err != nil {
		return "", "", err
	}
	operationID, id, ok := strings.Cut(local, "/")
	if !ok || operationID == "" || id == "" {
		return "", "", Errorf(EINVALID, "%q is not an artifact id", gid)
	}
	return operationID, id, nil
}

// ParseGlobalID decodes a global id; want, when set, is the kind it must
// be (EINVALID otherwise).
func ParseGlobalID(gid, want string) (kind, id string, err error) {
	raw, decErr := base64.RawURLEncoding.DecodeString(gid)
	kind, id, ok := strings.Cut(string(raw), ":")
	if decErr != nil || !ok || id == "" {
		return "", "", Errorf(EINVALID, "%q is not a Capstan id", gid)
	}
	if want != "" && kind != want {
		return "", "", Errorf(EINVALID, "id %q is a %s, not a %s", gid, kind, want)
	}
	return kind, id, nil
}

// Named names an entity in a message the way the API shows it: an
// intent, plan, operation or resource by its global id (a resource named
// by its key keeps its key); anything else as given.
func Named(what, id string) string {
	if id == "" {
		return what
	}
	kind := ""
	switch what {
	case "intent":
		kind = KindIntent
	case "plan":
		kind = KindPlan
	case "operation":
		kind = KindOperation
	case "plan patch":
		kind = KindPatch
	case "resource":
		if !strings.Contains(id, "/") {
			kind = KindResource
		}
	}
	if kind == "" {
		return what + " " + id
	}
	return what + " " + GlobalID(kind, id)
}
