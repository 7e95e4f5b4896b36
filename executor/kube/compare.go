package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/capstan-dev/capstan/secret"
)

// FieldChange is one field of an applied object whose live value is not
// the applied one: its path in the live object (spec.replicas,
// spec.template.spec.containers[0].image), the value Capstan applied
// (Desired), the live one (Observed: nil when the field is gone) and the
// field manager that owns it now (ChangedBy: kubectl, kubectl-set; empty
// when none does, as for a removed field).
type FieldChange struct {
	Path              string
	Desired, Observed any
	ChangedBy         string
}

// Compare lists the fields of applied (an object as Capstan applied it)
// whose value in live differs: only the fields Capstan applied, so that
// what the server defaults and what other managers own are left out. A
// list of objects is matched by their name where each has one (a
// container by name), else by index; a list of scalars is compared
// whole. Quantities compare by value (1000m is 1), numbers with the
// string the server keeps (50 is "50"). A value that stands for a
// secret (a Secret's data, a masked value) is not compared: it was
// never recorded.
func Compare(applied, live map[string]any) []FieldChange {
	var out []FieldChange
	for _, k := range []string{"metadata", "spec", "data", "stringData", "rules", "roleRef", "subjects", "type"} {
		if isSecret(applied) && (k == "data" || k == "stringData") {
			continue
		}
		v, ok := applied[k]
		if !ok {
			continue
		}
		if k == "metadata" {
			m, _ := v.(map[string]any)
			lm, _ := live["metadata"].(map[string]any)
			for _, f := range []string{"labels", "annotations"} {
				if want, ok := m[f]; ok {
					compareValue("metadata."+f, want, lm[f], &out)
				}
			}
			continue
		}
		compareValue(k, v, live[k], &out)
	}
	owners := Owners(live)
	for i := range out {
		out[i].ChangedBy = owners.Of(out[i].Path)
	}
	return out
}

func isSecret(obj map[string]any) bool {
	return obj["kind"] == "Secret" && obj["apiVersion"] == "v1"
}

func compareValue(path string, want, got any, out *[]FieldChange) {
	switch w := want.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		for k, v := range w {
			compareValue(path+"."+k, v, g[k], out)
		}
	case []any:
		g, _ := got.([]any)
		compareList(path, w, g, out)
	default:
		if !sameScalar(want, got) {
			*out = append(*out, FieldChange{Path: path, Desired: want, Observed: got})
		}
	}
}

func compareList(path string, want, got []any, out *[]FieldChange) {
	if !allNamed(want) {
		if len(want) > 0 && isMap(want[0]) && len(want) <= len(got) {
			for i := range want {
				compareValue(fmt.Sprintf("%s[%d]", path, i), want[i], got[i], out)
			}
			return
		}
		if !sameList(want, got) {
			*out = append(*out, FieldChange{Path: path, Desired: want, Observed: nilIfEmpty(got)})
		}
		return
	}
	for i, w := range want {
		name := w.(map[string]any)["name"]
		j := indexNamed(got, name)
		if j < 0 {
			*out = append(*out, FieldChange{Path: fmt.Sprintf("%s[name=%v]", path, name), Desired: w})
			continue
		}
		_ = i
		compareValue(fmt.Sprintf("%s[%d]", path, j), w, got[j], out)
	}
}

func nilIfEmpty(l []any) any {
	if l == nil {
		return nil
	}
	return l
}

func isMap(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

func allNamed(l []any) bool {
	for _, v := range l {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["name"].(string); !ok {
			return false
		}
	}
	return len(l) > 0
}

func indexNamed(l []any, name any) int {
	for i, v := range l {
		if m, ok := v.(map[string]any); ok && m["name"] == name {
			return i
		}
	}
	return -1
}

func sameList(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameScalar(a[i], b[i]) {
			return false
		}
	}
	return true
}

// sameScalar compares an applied value with a live one.
func sameScalar(want, got any) bool {
	if s, ok := want.(string); ok && (s == secretMask || strings.Contains(s, secret.Mask)) {
		return true // a secret's value: never recorded, not compared
	}
	if equalValue(want, got) {
		return true
	}
	ws, gs := fmt.Sprint(want), fmt.Sprint(got)
	if got == nil || want == nil {
		return want == nil && got == nil
	}
	if ws == gs {
		return true // 50 and "50": a quota's count as the server keeps it
	}
	wq, err1 := resource.ParseQuantity(ws)
	gq, err2 := resource.ParseQuantity(gs)
	return err1 == nil && err2 == nil && wq.Cmp(gq) == 0
}

// FieldOwners says which field manager owns each field of a live object,
// from its managedFields.
type FieldOwners map[string][]string

// Owners reads live's managedFields: for each field (as a path in live,
// spec.template.spec.containers[0].image), the managers that own it.
func Owners(live map[string]any) FieldOwners {
	owners := FieldOwners{}
	u := &unstructured.Unstructured{Object: live}
	for _, mf := range u.GetManagedFields() {
		if mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			continue
		}
		set.Iterate(func(p fieldpath.Path) {
			if path, ok := resolve(live, p); ok {
				owners[path] = append(owners[path], mf.Manager)
			}
		})
	}
	return owners
}

// Of is the manager that owns path, or the nearest field above it,
// other than Capstan (which a drifted field's owner is not), or "".
func (o FieldOwners) Of(path string) string {
	for p := path; p != ""; p = parent(p) {
		for _, m := range o[p] {
			if m != FieldManager {
				return m
			}
		}
		if len(o[p]) > 0 {
			return "" // Capstan's own, and nobody else's
		}
	}
	return ""
}

// parent is the path one field up (spec.replicas: spec;
// containers[0]: containers), "" at the top.
func parent(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// resolve turns a managed-fields path into a path in obj, with list
// items by index (as Compare names them); false when obj has no such
// item.
func resolve(obj map[string]any, p fieldpath.Path) (string, bool) {
	var b strings.Builder
	var cur any = obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, _ := cur.(map[string]any)
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(*pe.FieldName)
			cur = m[*pe.FieldName]
		case pe.Index != nil:
			l, _ := cur.([]any)
			if *pe.Index >= len(l) {
				return "", false
			}
			fmt.Fprintf(&b, "[%d]", *pe.Index)
			cur = l[*pe.Index]
		case pe.Key != nil || pe.Value != nil:
			l, _ := cur.([]any)
			i := slicesIndex(l, pe)
			if i < 0 {
				return "", false
			}
			fmt.Fprintf(&b, "[%d]", i)
			cur = l[i]
		}
	}
	return b.String(), true
}

// slicesIndex is the index of the item of l a key or value element
// selects, or -1.
func slicesIndex(l []any, pe fieldpath.PathElement) int {
	for i, item := range l {
		if pe.Value != nil {
			if fmt.Sprint((*pe.Value).Unstructured()) == fmt.Sprint(item) {
				return i
			}
			continue
		}
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		match := true
		for _, f := range *pe.Key {
			if !equalValue(f.Value.Unstructured(), m[f.Name]) && fmt.Sprint(f.Value.Unstructured()) != fmt.Sprint(m[f.Name]) {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

// AppliedRecord is obj as the evidence records it applied: a copy, with
// a Secret's values masked (a drift probe does not compare them, and a
// repair does not apply them again).
func AppliedRecord(obj *unstructured.Unstructured) map[string]any {
	rec, err := jsonCopy(obj.Object)
	if err != nil {
		return nil // not JSON: nothing a drift probe could compare
	}
	if isSecret(rec) {
		for _, k := range []string{"data", "stringData"} {
			if m, ok := rec[k].(map[string]any); ok {
				for key := range m {
					m[key] = secretMask
				}
			}
		}
	}
	return rec
}

// jsonCopy is a deep copy of an object through JSON: what a store gives
// back (its numbers float64, or int) becomes what client-go sends.
func jsonCopy(obj map[string]any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
