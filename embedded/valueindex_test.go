package embedded

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// indexOf builds a capability index over resources as the cache does.
func indexOf(t *testing.T, rs ...*capstan.Resource) *capIndex {
	t.Helper()
	tab := &resourceTable{}
	var ps []provider
	var facts []capstan.CandidateFacts
	for _, r := range rs {
		data, err := json.Marshal(r)
		require.NoError(t, err)
		i := tab.add(r.Key(), data)
		ps = append(ps, provider{i, 0})
		facts = append(facts, r.Facts(&r.ProvidedCapabilities[0]))
	}
	return newCapIndex(tab, ps, facts)
}

func s3(name, env string, scope, attrs map[string]any) *capstan.Resource {
	return &capstan.Resource{Type: "minio.instance", Name: name, Environment: env, LifecycleStatus: capstan.LifecycleActive,
		ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "object_storage.s3", Scope: scope, Attributes: attrs}}}
}

// The index answers each check as capstan.CheckConstraint would for every
// provider: the conformance suite holds whole searches to the naive one;
// this pins the cases an index gets wrong most easily.
func TestCapIndexPassingMatchesCheckConstraint(t *testing.T) {
	ci := indexOf(t,
		s3("a", "prod", map[string]any{"region": "eu"}, map[string]any{"gb": 100, "tier": "gold"}),
		s3("b", "dev", map[string]any{"environment": "prod"}, map[string]any{"gb": 50.0}),
		s3("c", "", nil, map[string]any{"gb": "lots", "region": "us"}),
	)
	minimum := capstan.ConstraintSpec{Match: capstan.MatchMinimum}
	maximum := capstan.ConstraintSpec{Match: capstan.MatchMaximum}
	for _, tc := range []struct {
		name string
		key  string
		spec capstan.ConstraintSpec
		want any
		pass []int
	}{
		{"exact string", "region", capstan.ConstraintSpec{}, "eu", []int{0}},
		{"attribute where the scope lacks the key", "region", capstan.ConstraintSpec{}, "us", []int{2}},
		{"scope environment overrides the resource's", "environment", capstan.ConstraintSpec{}, "prod", []int{0, 1}},
		{"no environment at all", "environment", capstan.ConstraintSpec{}, "", nil},
		{"numbers equal across int and float", "gb", capstan.ConstraintSpec{}, 50, []int{1}},
		{"one of a list", "tier", capstan.ConstraintSpec{}, []any{"silver", "gold"}, []int{0}},
		{"minimum skips non-numbers", "gb", minimum, 60, []int{0}},
		{"maximum", "gb", maximum, 100, []int{0, 1}},
		{"minimum of a non-number wants nothing", "gb", minimum, "x", nil},
		{"a key nobody declares", "zone", capstan.ConstraintSpec{}, "z", nil},
		{"name", "name", capstan.ConstraintSpec{}, "b", []int{1}},
		{"one of names", "name", capstan.ConstraintSpec{}, []any{"a", "c", 7}, []int{0, 2}},
		{"name never numeric", "name", minimum, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &arena{}
			got := ci.passing(a, tc.key, tc.spec, tc.want)
			var pass []int
			for i := range ci.providers {
				if got.has(i) {
					pass = append(pass, i)
				}
			}
			require.Equal(t, tc.pass, pass)
			for i := range ci.providers { // the same verdicts as the one definition
				d, err := ci.t.resource(ci.providers[i].res)
				require.NoError(t, err)
				v, ok := d.facts[0].Value(tc.key)
				require.Equal(t, got.has(i), capstan.CheckConstraint(tc.key, tc.spec, tc.want, v, ok).Passed, "provider %d", i)
			}
		})
	}
}

func TestResourceTableDecodesOnDemandAndBoundsItsMemo(t *testing.T) {
	tab := &resourceTable{}
	for i := 0; i < memoSize+10; i++ {
		r := s3(fmt.Sprintf("r%d", i), "prod", nil, nil)
		data, err := json.Marshal(r)
		require.NoError(t, err)
		tab.add(r.Key(), data)
	}
	for i := int32(0); i < memoSize+10; i++ {
		d, err := tab.resource(i)
		require.NoError(t, err)
		require.Equal(t, string(tab.key(i)), d.r.Key())
		require.Len(t, d.facts, 1)
		require.LessOrEqual(t, len(tab.memo), memoSize)
	}
	again, err := tab.resource(memoSize + 9)
	require.NoError(t, err)
	same, err := tab.resource(memoSize + 9)
	require.NoError(t, err)
	require.Same(t, again, same, "a resource in the memo is decoded once")
}
