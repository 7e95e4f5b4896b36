package capstan

import (
	"fmt"
	"slices"
	"strings"
)

// AppliedObjectsKey is the desired-state field that holds the Kubernetes
// objects a resource's operations applied (AppliedObjects): what a drift
// probe compares the live objects with, and a repair applies again.
const AppliedObjectsKey = "applied_objects"

// AppliedSource is the evidence source field in which a runner records
// the object it applied, as it sent it (a Secret's values masked).
const AppliedSource = "applied"

// AppliedObjects is the set of objects a resource's operations applied,
// after an operation that produced evidence: prev (the resource's, from
// its desired state) with each object the evidence records as applied
// (Source[AppliedSource]) put in, the later replacing the earlier of the
// same object (api group, kind, namespace, name), and each object the
// evidence records as deleted taken out. A Helm release's evidence
// records all its objects (a list): they replace every object recorded
// for that release, so that one an upgrade dropped is dropped here too.
// Evidence is taken in order.
// Nil when no object is left.
func AppliedObjects(prev any, evidence []Evidence) []any {
	objs, _ := prev.([]any)
	out := slices.Clone(objs)
	for _, e := range evidence {
		if e.Result != EvidencePassed || e.Source == nil {
			continue
		}
		if obj, ok := e.Source[AppliedSource].(map[string]any); ok {
			out = put(out, obj)
			continue
		}
		if objs, ok := e.Source[AppliedSource].([]any); ok { // a Helm release's objects, all of them
			release, ns := str(e.Source["release"]), str(e.Source["namespace"])
			out = slices.DeleteFunc(out, func(o any) bool { return ofRelease(o, release, ns) })
			for _, o := range objs {
				if obj, ok := o.(map[string]any); ok {
					out = put(out, obj)
				}
			}
			continue
		}
		if e.Source["action"] == "deleted" || e.Source["action"] == "absent" {
			out = slices.DeleteFunc(out, func(o any) bool { return objectKey(o) == sourceKey(e.Source) })
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ofRelease reports whether o was applied by Helm as part of release
// (its annotations meta.helm.sh/release-name and -namespace).
func ofRelease(o any, release, ns string) bool {
	m, _ := o.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	return release != "" && str(ann["meta.helm.sh/release-name"]) == release && str(ann["meta.helm.sh/release-namespace"]) == ns
}

func put(objs []any, obj map[string]any) []any {
	key := objectKey(obj)
	for i, o := range objs {
		if objectKey(o) == key {
			objs[i] = obj
			return objs
		}
	}
	return append(objs, obj)
}

// objectKey names an object by its API group (not version: one object
// served at two versions is one), kind, namespace and name.
func objectKey(o any) string {
	m, _ := o.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	return key(str(m["apiVersion"]), str(m["kind"]), str(meta["namespace"]), str(meta["name"]))
}

func sourceKey(s map[string]any) string {
	return key(str(s["api_version"]), str(s["kind"]), str(s["namespace"]), str(s["name"]))
}

func key(apiVersion, kind, namespace, name string) string {
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		group = "" // the core group: v1
	}
	return fmt.Sprintf("%s|%s|%s|%s", group, kind, namespace, name)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
