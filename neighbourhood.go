package capstan

import (
	"cmp"
	"slices"
)

// Bounds of a neighbourhood (ResourceGraph): how far it walks and how
// many resources one page of it draws; past the page they are counted
// by type.
const (
	MaxGraphDepth  = 10
	MaxGraphBudget = 1000
)

// MaxWalkResources bounds how many resources one dependency walk reads
// (a neighbourhood's, an impact's, a dependencies list's): a hub with
// more within reach is refused, typed, rather than read whole.
const MaxWalkResources = 50_000

// WalkTooLarge is the error of a dependency walk that reached more than
// limit resources.
func WalkTooLarge(limit, depth int) error {
	err := Errorf(EINVALID, "the walk reaches more than %d resources within %d hops: ask for fewer hops, one direction, or a filter", limit, depth)
	err.Extensions = map[string]any{"limit": "graphWalk"}
	return err
}

// GraphFilter narrows a neighbourhood: only relationships of these types
// are followed, and only resources of these types and environments are
// drawn (or walked through). An empty list lets everything through. The
// root is always drawn.
type GraphFilter struct {
	Relationships []RelationshipType
	Types         []string
	Environments  []string
}

// GraphPage is which part of a neighbourhood to draw: at most First
// resources, after the resource whose key is After (none: from the
// root), in the neighbourhood's order.
type GraphPage struct {
	First int
	After string
}

// Neighbourhood is one page of a resource's neighbourhood as a graph:
// the resources within Depth hops in Direction, nearest first (ties by
// key), at most a page of them, and every relationship they hold to one
// another or to the resources of the pages before.
type Neighbourhood struct {
	Root      *Resource
	Direction Direction
	Depth     int
	Nodes     []GraphNode
	Edges     []Link
	// Omitted counts by type, most first, what was within reach but past
	// the page.
	Omitted []ResourceCount
	// HasMore says a later page has resources; After is the key the page
	// starts after (none: the first page).
	HasMore bool
	After   string
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
func CheckNeighbourhood(dir Direction, depth int, page GraphPage) error {
	switch {
	case dir != Outgoing && dir != Incoming && dir != Both:
		return Errorf(EINVALID, "direction %q is not outgoing, incoming or both", dir)
	case depth < 1 || depth > MaxGraphDepth:
		return Errorf(EINVALID, "depth must be 1 to %d, not %d", MaxGraphDepth, depth)
	case page.First < 1 || page.First > MaxGraphBudget:
		return Errorf(EINVALID, "first must be 1 to %d resources, not %d", MaxGraphBudget, page.First)
	}
	return nil
}

// DrawNeighbourhood draws root's neighbourhood from the resources its
// walks reached (outgoing, incoming, or both). It walks again, over the
// relationships the reached resources hold and through the filter, so
// that a resource is drawn only when the filter lets a way to it
// through, at its distance along that way; then it keeps the page and
// links each of its resources to the others drawn so far. An After that
// is not in the neighbourhood is INVALID.
func DrawNeighbourhood(root *Resource, dir Direction, depth int, reached []Dependency, f GraphFilter, page GraphPage) (*Neighbourhood, error) {
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
	n := &Neighbourhood{Root: root, Direction: dir, Depth: depth, After: page.After}
	for k, d := range dist {
		n.Nodes = append(n.Nodes, GraphNode{Resource: byKey[k], Depth: d})
	}
	slices.SortFunc(n.Nodes, func(a, b GraphNode) int {
		return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(a.Resource.Key(), b.Resource.Key()))
	})
	start := 0
	if page.After != "" {
		start = slices.IndexFunc(n.Nodes, func(g GraphNode) bool { return g.Resource.Key() == page.After })
		if start < 0 {
			return nil, Errorf(EINVALID, "after: %s is not in this neighbourhood", page.After)
		}
		start++
	}
	end := min(start+page.First, len(n.Nodes))
	drawn := map[string]bool{} // this page: true; the pages before: false
	for i, g := range n.Nodes[:end] {
		drawn[g.Resource.Key()] = i >= start
	}
	omitted := map[string]int{}
	for _, g := range n.Nodes[end:] {
		omitted[g.Resource.Type]++
	}
	n.Omitted, n.HasMore = counts(omitted), end < len(n.Nodes)
	n.Nodes = n.Nodes[start:end]
	for _, l := range links {
		onPage, holderDrawn := drawn[l.Holder]
		targetOnPage, targetDrawn := drawn[l.Target]
		if holderDrawn && targetDrawn && (onPage || targetOnPage) {
			n.Edges = append(n.Edges, l)
		}
	}
	return n, nil
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
