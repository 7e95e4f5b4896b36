package service

import "github.com/capstan-dev/capstan"

// targetKey names the resource an intent's operation creates or changes:
// its target type and the name it asks for ("" when it names none). What
// the operation does to that resource is the executor's, computed by the
// root package's lifecycle functions and committed with the operation.
func targetKey(in *capstan.Intent) string {
	name, _ := in.DesiredResult["name"].(string)
	if name == "" || !capstan.ValidKey(in.TargetResourceType) {
		return ""
	}
	return capstan.ResourceKey(in.TargetResourceType, name)
}
