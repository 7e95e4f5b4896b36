package capstan

import (
	"cmp"
	"slices"
	"time"
)

// Both walks relationships either way: what is linked, not only what
// depends.
const Both Direction = "both"

// Bounds of a path search (PathQuery): how many paths, how many hops, and
// how much a search may explore before it stops with EINVALID.
const (
	MaxPaths     = 10
	MaxPathDepth = 10
	// PathSearchBudget is how many partial paths the embedded store's
	// search may hold; PathSearchTimeout how long Neo4j's may run.
	PathSearchBudget  = 200_000
	PathSearchTimeout = 5 * time.Second
)

// PathQuery asks for the shortest paths from one resource to another:
// why one depends on the other, or how two are linked.
type PathQuery struct {
	// From and To are resource ids.
	From, To string
	// Direction is Outgoing along From's own relationships (From depends
	// on To), Incoming against them (To depends on From), or Both.
	Direction Direction
	// Max is how many paths, 1 to MaxPaths.
	Max int
	// MaxDepth is how many hops a path may have, 1 to MaxPathDepth.
	MaxDepth int
}

// Validate checks the query's bounds.
func (q PathQuery) Validate() error {
	switch {
	case q.From == "" || q.To == "":
		return Errorf(EINVALID, "a path search needs both ends")
	case q.From == q.To:
		return Errorf(EINVALID, "a path search needs two different resources")
	case q.Direction != Outgoing && q.Direction != Incoming && q.Direction != Both:
		return Errorf(EINVALID, "direction %q is not outgoing, incoming or both", q.Direction)
	case q.Max < 1 || q.Max > MaxPaths:
		return Errorf(EINVALID, "paths must be 1 to %d, not %d", MaxPaths, q.Max)
	case q.MaxDepth < 1 || q.MaxDepth > MaxPathDepth:
		return Errorf(EINVALID, "a path's hops must be 1 to %d, not %d", MaxPathDepth, q.MaxDepth)
	}
	return nil
}

// ResourcePath is one path: Resources run from the query's From to its
// To, and Hops[i] joins Resources[i] and Resources[i+1]. No resource is
// on a path twice.
type ResourcePath struct {
	Resources []*Resource
	Hops      []Link
}

// Link is one relationship between two resources as its holder holds
// it: Holder's relationship of type Relationship points at Target (keys).
// A path's hops are links (walking Incoming, or Both, a hop may point
// back along the path), and so are a neighbourhood's edges.
type Link struct {
	Holder, Target string
	Relationship   RelationshipType
}

// PathSearchTooLarge is the error of a search that passed its bound.
func PathSearchTooLarge(q PathQuery) error {
	err := Errorf(EINVALID, "the path search passed its bound (%d partial paths or %s) within %d hops; ask for fewer hops or paths",
		PathSearchBudget, PathSearchTimeout, q.MaxDepth)
	err.Extensions = map[string]any{"limit": "pathSearch"}
	return err
}

// SelectPaths orders the paths a store found shortest first, ties by
// their resources' keys then their hops, and keeps the first max. A
// store finds every path of the max shortest lengths (within MaxDepth),
// so both stores select the same ones.
func SelectPaths(paths []ResourcePath, max int) []ResourcePath {
	slices.SortFunc(paths, comparePaths)
	paths = slices.CompactFunc(paths, func(a, b ResourcePath) bool { return comparePaths(a, b) == 0 })
	if len(paths) > max {
		paths = paths[:max]
	}
	return paths
}

func comparePaths(a, b ResourcePath) int {
	if c := cmp.Compare(len(a.Hops), len(b.Hops)); c != 0 {
		return c
	}
	for i := range a.Resources {
		if c := cmp.Compare(a.Resources[i].Key(), b.Resources[i].Key()); c != 0 {
			return c
		}
	}
	for i := range a.Hops {
		ha, hb := a.Hops[i], b.Hops[i]
		if c := cmp.Or(cmp.Compare(ha.Holder, hb.Holder), cmp.Compare(ha.Relationship, hb.Relationship)); c != 0 {
			return c
		}
	}
	return 0
}
