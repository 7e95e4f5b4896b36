package kube

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/capstan-dev/capstan"
)

// Change is one field an apply changes, or drift moved: its path
// (spec.replicas, spec.template.spec.containers[0].image), the value
// before (Old) and after (New); nil when absent.
type Change = capstan.FieldDiff

// ignored are the fields that change with every write, or that the
// server alone keeps: no apply is about them.
var ignored = map[string]bool{
	"metadata.managedFields":     true,
	"metadata.resourceVersion":   true,
	"metadata.generation":        true,
	"metadata.creationTimestamp": true,
	"metadata.uid":               true,
	"status":                     true,
}

// Diff lists the fields that differ between two objects (before, after),
// leaving out what the server keeps (ignored). Lists of one length are
// compared item by item (containers[0].image), others whole.
func Diff(before, after map[string]any) []Change {
	var out []Change
	diffMaps("", before, after, &out)
	return out
}

func diffMaps(prefix string, a, b map[string]any, out *[]Change) {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if ignored[path] {
			continue
		}
		diffValues(path, a[k], b[k], out)
	}
}

func diffValues(path string, a, b any, out *[]Change) {
	am, aMap := a.(map[string]any)
	bm, bMap := b.(map[string]any)
	al, aList := a.([]any)
	bl, bList := b.([]any)
	switch {
	case aMap && bMap:
		diffMaps(path, am, bm, out)
	case aMap && b == nil:
		diffMaps(path, am, map[string]any{}, out)
	case bMap && a == nil:
		diffMaps(path, map[string]any{}, bm, out)
	case aList && bList && len(al) == len(bl):
		for i := range al {
			diffValues(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], out)
		}
	case !equalValue(a, b):
		*out = append(*out, Change{Path: path, Old: a, New: b})
	}
}

// equalValue compares two decoded JSON values; numbers compare by value
// (a manifest's 3 is the server's int64 3).
func equalValue(a, b any) bool {
	if an, ok := number(a); ok {
		bn, ok := number(b)
		return ok && an == bn
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	case int32:
		return float64(n), true
	}
	return 0, false
}
