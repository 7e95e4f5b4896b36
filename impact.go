package capstan

import (
	"cmp"
	"slices"
)

// Impact is what depends on a resource, directly or through others: what
// breaks if it fails.
type Impact struct {
	Root *Resource
	// Dependents are every resource that depends on Root, by key.
	Dependents []*Resource
	// ByType and ByEnvironment count the dependents, most first, ties by
	// value.
	ByType, ByEnvironment []ResourceCount
	// Operating are the dependents with an operation running now, by key,
	// at most MaxImpactOperating.
	Operating []*Resource
}

// ResourceCount is how many dependents share a value.
type ResourceCount struct {
	Value string
	Count int
}

// Bounds of an impact: how far it walks, and how many operating
// dependents it lists (all are counted).
const (
	MaxImpactDepth     = 10
	MaxImpactOperating = 100
)

// Total is how many resources depend on the root.
func (i *Impact) Total() int { return len(i.Dependents) }

// WeighImpact summarises the dependents an incoming walk from root found.
func WeighImpact(root *Resource, walk []Dependency) *Impact {
	im := &Impact{Root: root}
	seen := map[string]bool{root.ID: true}
	byType, byEnv := map[string]int{}, map[string]int{}
	for _, d := range walk {
		r := d.Resource
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		im.Dependents = append(im.Dependents, r)
		byType[r.Type]++
		byEnv[r.Environment]++
	}
	slices.SortFunc(im.Dependents, func(a, b *Resource) int { return cmp.Compare(a.Key(), b.Key()) })
	for _, r := range im.Dependents {
		if r.ActiveOperationID != "" && len(im.Operating) < MaxImpactOperating {
			im.Operating = append(im.Operating, r)
		}
	}
	im.ByType, im.ByEnvironment = counts(byType), counts(byEnv)
	return im
}

func counts(m map[string]int) []ResourceCount {
	out := make([]ResourceCount, 0, len(m))
	for v, n := range m {
		out = append(out, ResourceCount{Value: v, Count: n})
	}
	slices.SortFunc(out, func(a, b ResourceCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
	})
	return out
}
