package capstan

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// What a created resource provides may depend on what its operation
// made: the address of the host it was installed on, the keys its install
// generated. A scenario's provides attributes say so with placeholders,
// filled when the operation that creates the resource succeeds:
//
//	${binding.REQ.ATTR}  attribute ATTR of the provider bound to the
//	                     scenario's requirement REQ (address of a host)
//	${artifact.NAME}     the secret: reference of the operation's secret
//	                     artifact NAME (its value stays in the secret store)
//
// Until then the attribute is unset: nothing reaches a half-made store.

// providedPlaceholder matches one placeholder of a provided attribute.
var providedPlaceholder = regexp.MustCompile(`\$\{(binding\.([a-z0-9][a-z0-9._-]*)\.([a-z0-9_]+)|artifact\.([a-z0-9][a-z0-9._-]*))\}`)

// ProvidedRef is one placeholder of a provided attribute: a binding's
// attribute or a secret artifact.
type ProvidedRef struct {
	Binding, Attribute string // ${binding.Binding.Attribute}
	Artifact           string // ${artifact.Artifact}
}

// ProvidedRefs lists the placeholders of a provided attribute's value;
// an error names a "${" that is none of them.
func ProvidedRefs(v any) ([]ProvidedRef, error) {
	s, ok := v.(string)
	if !ok || !strings.Contains(s, "${") {
		return nil, nil
	}
	var refs []ProvidedRef
	for _, m := range providedPlaceholder.FindAllStringSubmatch(s, -1) {
		refs = append(refs, ProvidedRef{Binding: m[2], Attribute: m[3], Artifact: m[4]})
	}
	if rest := providedPlaceholder.ReplaceAllString(s, ""); strings.Contains(rest, "${") {
		return nil, fmt.Errorf("%q: a placeholder here is ${binding.REQUIREMENT.ATTRIBUTE} or ${artifact.NAME}", s)
	}
	return refs, nil
}

// Unfilled reports whether a provided attribute's value waits for its
// operation to fill it.
func Unfilled(v any) bool {
	refs, err := ProvidedRefs(v)
	return err == nil && len(refs) > 0
}

// KnownProvided is a provided capability's attributes without those its
// operation has yet to fill.
func KnownProvided(attrs map[string]any) map[string]any {
	out := maps.Clone(attrs)
	maps.DeleteFunc(out, func(_ string, v any) bool { return Unfilled(v) })
	return out
}

// ProvidedLookup answers a placeholder: the value it stands for, or why
// there is none.
type ProvidedLookup func(ProvidedRef) (string, error)

// FillProvided returns attrs with every placeholder filled by lookup.
// An attribute that cannot be filled is left out, and why is returned
// (one line each, sorted by attribute): the rest still holds.
func FillProvided(attrs map[string]any, lookup ProvidedLookup) (map[string]any, []string) {
	out := maps.Clone(attrs)
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		refs, err := ProvidedRefs(attrs[k])
		if err != nil {
			delete(out, k)
			problems = append(problems, k+": "+err.Error())
			continue
		}
		if len(refs) == 0 {
			continue
		}
		s := attrs[k].(string)
		for _, ref := range refs {
			v, err := lookup(ref)
			if err != nil {
				delete(out, k)
				problems = append(problems, k+": "+err.Error())
				break
			}
			s = strings.Replace(s, ref.String(), v, 1)
		}
		if _, kept := out[k]; kept {
			out[k] = s
		}
	}
	return out, problems
}

// String is the placeholder as written.
func (r ProvidedRef) String() string {
	if r.Artifact != "" {
		return "${artifact." + r.Artifact + "}"
	}
	return "${binding." + r.Binding + "." + r.Attribute + "}"
}
