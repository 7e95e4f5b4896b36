package capstan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSelectPaths(t *testing.T) {
	r := func(name string) *Resource { return &Resource{Type: "compute.node", Name: name} }
	a, b, c, d := r("a"), r("b"), r("c"), r("d")
	hop := func(holder, target *Resource, rel RelationshipType) Link {
		return Link{Holder: holder.Key(), Target: target.Key(), Relationship: rel}
	}
	direct := ResourcePath{Resources: []*Resource{a, d}, Hops: []Link{hop(a, d, RelUses)}}
	directDependsOn := ResourcePath{Resources: []*Resource{a, d}, Hops: []Link{hop(a, d, RelDependsOn)}}
	viaB := ResourcePath{Resources: []*Resource{a, b, d}, Hops: []Link{hop(a, b, RelRunsOn), hop(b, d, RelRunsOn)}}
	viaC := ResourcePath{Resources: []*Resource{a, c, d}, Hops: []Link{hop(a, c, RelRunsOn), hop(c, d, RelRunsOn)}}
	viaCBack := ResourcePath{Resources: []*Resource{a, c, d}, Hops: []Link{hop(c, a, RelRunsOn), hop(c, d, RelRunsOn)}}
	for _, tc := range []struct {
		name string
		in   []ResourcePath
		max  int
		want []ResourcePath
	}{
		{"shortest first", []ResourcePath{viaC, direct, viaB}, 3, []ResourcePath{direct, viaB, viaC}},
		{"cut to max", []ResourcePath{viaC, viaB, direct}, 2, []ResourcePath{direct, viaB}},
		{"ties by relationship", []ResourcePath{direct, directDependsOn}, 2, []ResourcePath{directDependsOn, direct}},
		{"ties by holder", []ResourcePath{viaCBack, viaC}, 2, []ResourcePath{viaC, viaCBack}},
		{"one of each found twice", []ResourcePath{viaB, direct, viaB}, 3, []ResourcePath{direct, viaB}},
		{"none", nil, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, SelectPaths(tc.in, tc.max))
		})
	}
}
