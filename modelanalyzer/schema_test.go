package modelanalyzer

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// TestProposedChangeIsPlanChange: every field a model may propose has
// PlanChange's JSON name, so the vocabulary and the schema cannot drift.
func TestProposedChangeIsPlanChange(t *testing.T) {
	plan := jsonNames(reflect.TypeFor[capstan.PlanChange]())
	for _, name := range jsonNames(reflect.TypeFor[ProposedChange]()) {
		require.Contains(t, plan, name)
	}
}

// TestTheSchemaIsStrict: strict structured output wants every property
// required, no additional ones, no references, and the ops the
// vocabulary has.
func TestTheSchemaIsStrict(t *testing.T) {
	s := Schema()
	var walk func(path string, m map[string]any)
	walk = func(path string, m map[string]any) {
		_, hasRef := m["$ref"]
		require.False(t, hasRef, path)
		if m["type"] == "object" {
			require.Equal(t, false, m["additionalProperties"], path)
			props := m["properties"].(map[string]any)
			var names []string
			for k := range props {
				names = append(names, k)
			}
			var required []string
			for _, r := range m["required"].([]any) {
				required = append(required, r.(string))
			}
			slices.Sort(names)
			slices.Sort(required)
			require.Equal(t, names, required, path)
			for k, v := range props {
				walk(path+"."+k, v.(map[string]any))
			}
		}
		if items, ok := m["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
	}
	walk("answer", s)
	ops := dig(s, "properties", "proposed_patch", "items", "properties", "op")["enum"]
	require.Len(t, ops, len(capstan.ChangeOps))
	for _, typ := range []reflect.Type{reflect.TypeFor[Answer](), reflect.TypeFor[Finding](), reflect.TypeFor[Citation](), reflect.TypeFor[ProposedChange](), reflect.TypeFor[Parameter](), reflect.TypeFor[EdgeRef]()} {
		for i := range typ.NumField() {
			require.NotContains(t, typ.Field(i).Tag.Get("json"), "omitempty", typ.Name()+"."+typ.Field(i).Name)
		}
	}
}

func TestMaskingIsReversible(t *testing.T) {
	m := newMasker([]*regexp.Regexp{regexp.MustCompile(`host-\d+`)})
	var names []string
	for i := 1; i <= 12; i++ {
		names = append(names, fmt.Sprintf("host-%d", i))
	}
	text := strings.Join(names, " ") + " host-1 again, and 192.168.1.20"
	masked := m.mask(text)
	require.NotContains(t, masked, "host-")
	require.NotContains(t, masked, "192.168")
	require.Regexp(t, `MASK_[0-9A-F]{6}_12`, masked)
	tok := m.mask("host-1")
	require.Equal(t, 2, strings.Count(masked, tok+" "), "the same name, the same placeholder")
	require.Equal(t, text, m.unmask(masked))
	require.Equal(t, "MASK_99", m.unmask("MASK_99"), "an unknown placeholder stays as it is")
}

// jsonNames lists the JSON names of a struct type's fields.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
