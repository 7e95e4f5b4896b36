package capstan

import (
	"cmp"
	"slices"
)

// Bounds of a neighbourhood (ResourceGraph): how far it walks and how
// many resources it draws; past the budget they are counted by type.
const (
	MaxGraphDepth  = 10
	MaxGraphBudget = 1000
)

// GraphFilter narrows a neighbourhood: only relationships of these types
// are followed, and only resources of these types and environments are
// drawn (or walked through). An empty list lets everything through. The
// root is always drawn.
type GraphFilter struct {
	Relationships []RelationshipType
	Types         []string
	Environments  []string
}

// Neighbourhood is a resource's neighbourhood as a graph: the resources
// within Depth hops in Direction, nearest first (ties by key), at most
// the budget of them, and every relationship among them.
type Neighbourhood struct {
	Root      *Resource
	Direction Direction
	Depth     int
	Nodes     []GraphNode
	Edges     []Link
	// Omitted counts by type, most first, what was within reach but past
	// the budget.
	Omitted []ResourceCount
}

// GraphNode is a drawn resource and its distance from the root.
type GraphNode struct {
	Resource *Resource
	Depth    int
}

// OmittedTotal is how many resources were past the budget.
func (n *Neighbourhood) OmittedTotal() int {
	total := 0
	for _, c := range n.Omitted {
		total += c.Count
	}
	return total
}

// MaxGraphFilter bounds each list of a GraphFilter.
const MaxGraphFilter = 50

// Validate checks the filter's lists are within MaxGraphFilter.
func (f GraphFilter) Validate() error {
	for name, n := range map[string]int{"relationships": len(f.Relationships), "types": len(f.Types), "environments": len(f.Environments)} {
		if n > MaxGraphFilter {
			return Errorf(EINVALID, "a filter lists at most %d %s, not %d", MaxGraphFilter, name, n)
		}
	}
	return nil
}

// CheckNeighbourhood checks a neighbourhood's bounds.
func CheckNeighbourhood(dir Direction, depth, budget int) error {
	switch {
	case dir != Outgoing && dir != Incoming && dir != Both:
		return Errorf(EINVALID, "direction %q is not outgoing, incoming or both", dir)
	case depth < 1 || depth > MaxGraphDepth:
		return Errorf(EINVALID, "depth must be 1 to %d, not %d", MaxGraphDepth, depth)
	case budget < 1 || budget > MaxGraphBudget:
		return Errorf(EINVALID, "budget must be 1 to %d resources, not %d", MaxGraphBudget, budget)
	}
	return nil
}

// DrawNeighbourhood draws root's neighbourhood from the resources its
// walks reached (outgoing, incoming, or both). It walks again, over the
// relationships the reached resources hold and through the filter, so
// that a resource is drawn only when the filter lets a way to it
// through, at its distance along that way; then it keeps the budget's
// nearest and links every pair of them a relationship joins.
func DrawNeighbourhood(root *Resource, dir Direction, depth int, reached []Dependency, f GraphFilter, budget int) *Neighbourhood {
	byKey := map[string]*Resource{root.Key(): root}
	for _, d := range reached {
		byKey[d.Resource.Key()] = d.Resource
	}
	passes := func(r *Resource) bool {
		return r == root || (allows(f.Types, r.Type) && allows(f.Environments, r.Environment))
	}
	links := filteredLinks(byKey, f)
	dist := map[string]int{root.Key(): 0}
	if dir != Incoming {
		walk(root.Key(), depth, dist, outgoingOf(links), byKey, passes)
	}
	if dir != Outgoing {
		walk(root.Key(), depth, dist, incomingOf(links), byKey, passes)
	}
	n := &Neighbourhood{Root: root, Direction: dir, Depth: depth}
	for k, d := range dist {
		n.Nodes = append(n.Nodes, GraphNode{Resource: byKey[k], Depth: d})
	}
	slices.SortFunc(n.Nodes, func(a, b GraphNode) int {
		return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(a.Resource.Key(), b.Resource.Key()))
	})
	omitted := map[string]int{}
	if len(n.Nodes) > budget {
		for _, g := range n.Nodes[budget:] {
			omitted[g.Resource.Type]++
		}
		n.Nodes = n.Nodes[:budget]
	}
	n.Omitted = counts(omitted)
	drawn := map[string]bool{}
	for _, g := range n.Nodes {
		drawn[g.Resource.Key()] = true
	}
	for _, l := range links {
		if drawn[l.Holder] && drawn[l.Target] {
			n.Edges = append(n.Edges, l)
		}
	}
	return n
}

// filteredLinks are the relationships the resources hold to one another
// that the filter follows, by holder, target and type.
func filteredLinks(byKey map[string]*Resource, f GraphFilter) []Link {
	var out []Link
	for _, r := range byKey {
		for _, rel := range r.Relationships {
			if byKey[rel.Target] != nil && allows(f.Relationships, rel.Type) {
				out = append(out, Link{Holder: r.Key(), Target: rel.Target, Relationship: rel.Type})
			}
		}
	}
	slices.SortFunc(out, func(a, b Link) int {
		return cmp.Or(cmp.Compare(a.Holder, b.Holder), cmp.Compare(a.Target, b.Target), cmp.Compare(a.Relationship, b.Relationship))
	})
	return slices.Compact(out)
}

func outgoingOf(links []Link) map[string][]string {
	m := map[string][]string{}
	for _, l := range links {
		m[l.Holder] = append(m[l.Holder], l.Target)
	}
	return m
}

func incomingOf(links []Link) map[string][]string {
	m := map[string][]string{}
	for _, l := range links {
		m[l.Target] = append(m[l.Target], l.Holder)
	}
	return m
}

// walk records, breadth first from start along next, each resource the
// filter lets through within depth hops at its least distance.
func walk(start string, depth int, dist map[string]int, next map[string][]string, byKey map[string]*Resource, passes func(*Resource) bool) {
	frontier := []string{start}
	seen := map[string]bool{start: true}
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		var ahead []string
		for _, k := range frontier {
			for _, t := range next[k] {
				if seen[t] || !passes(byKey[t]) {
					continue
				}
				seen[t] = true
				if old, ok := dist[t]; !ok || d < old {
					dist[t] = d
				}
				ahead = append(ahead, t)
			}
		}
		frontier = ahead
	}
}

func allows[T comparable](list []T, v T) bool { return len(list) == 0 || slices.Contains(list, v) }
