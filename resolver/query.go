package resolver

import (
	"context"
	"unicode/utf8"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/graph/model"
)

// node resolves a global id to its entity, or nil when it does not exist
// in the caller's organization.
func (r *Resolver) node(ctx context.Context, gid string) (capstan.Entity, error) {
	kind, id, err := parseID(gid, "")
	if err != nil {
		return nil, err
	}
	var e capstan.Entity
	switch kind {
	case kindResource:
		e, err = r.Service.Resource(ctx, id)
	case kindIntent:
		e, err = r.Service.Intent(ctx, id)
	case kindPlan:
		e, err = r.Service.Plan(ctx, id)
	case kindScenario:
		e, err = r.Service.Scenario(ctx, id)
	case kindPack:
		e, err = r.Service.Pack(ctx, id)
	case kindCapability:
		e, err = r.Service.Capability(ctx, id)
	case kindOperation:
		e, err = r.Service.Operation(ctx, id)
	case capstan.KindPatch:
		e, err = r.Service.PlanPatch(ctx, id)
	case capstan.KindArtifact:
		e, err = r.Service.Artifact(ctx, gid)
	case kindResourceType:
		var all []*capstan.ResourceType
		all, err = r.Service.ResourceTypes(ctx)
		for _, t := range all {
			if t.Key == id {
				return t, nil
			}
		}
		if err == nil {
			return nil, nil
		}
	default:
		return nil, capstan.Errorf(capstan.EINVALID, "unknown id kind %q", kind)
	}
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// MaxSearchLength bounds ResourceFilter.search: a key or a name is
// shorter, and every resource of the organization is matched against it.
const MaxSearchLength = 200

func (r *Resolver) resources(ctx context.Context, filter *model.ResourceFilter, first *int, after *string) (*model.ResourceConnection, error) {
	n, start, err := pageArgs(first, after)
	if err != nil {
		return nil, err
	}
	f := capstan.ResourceFilter{After: start, Limit: n + 1}
	if filter != nil {
		f.Type, f.Environment, f.Capability = deref(filter.Type), deref(filter.Environment), deref(filter.Capability)
		f.Lifecycle = deref(filter.LifecycleStatus)
		f.Health = filter.Health
		f.Search = deref(filter.Search)
		if n := utf8.RuneCountInString(f.Search); n > MaxSearchLength {
			return nil, capstan.Errorf(capstan.EINVALID, "search is %d characters; at most %d", n, MaxSearchLength)
		}
	}
	if n == 0 {
		f.Limit = 1
	}
	items, total, err := r.Service.Resources(ctx, f)
	if err != nil {
		return nil, err
	}
	items, cursors, info := storePage(items, n, start, (*capstan.Resource).Key)
	c := &model.ResourceConnection{PageInfo: info, TotalCount: total, Edges: []model.ResourceEdge{}}
	for i, r := range items {
		c.Edges = append(c.Edges, model.ResourceEdge{Cursor: cursors[i], Node: r})
	}
	return c, nil
}

func (r *Resolver) resource(ctx context.Context, id, key *string) (*capstan.Resource, error) {
	switch {
	case id != nil && key == nil:
		lid, err := localID(*id, kindResource)
		if err != nil {
			return nil, err
		}
		return nilIfNotFound(r.Service.Resource(ctx, lid))
	case key != nil && id == nil:
		return nilIfNotFound(r.Service.ResourceByKey(ctx, *key))
	}
	return nil, capstan.Errorf(capstan.EINVALID, "give exactly one of id and key")
}

func (r *Resolver) intents(ctx context.Context, filter *model.IntentFilter, first *int, after *string) (*model.IntentConnection, error) {
	n, start, err := pageArgs(first, after)
	if err != nil {
		return nil, err
	}
	f := capstan.IntentFilter{After: start, Limit: n + 1}
	if filter != nil {
		f.Status = deref(filter.Status)
	}
	items, total, err := r.Service.Intents(ctx, f)
	if err != nil {
		return nil, err
	}
	items, cursors, info := storePage(items, n, start, func(i *capstan.Intent) string { return i.ID })
	c := &model.IntentConnection{PageInfo: info, TotalCount: total, Edges: []model.IntentEdge{}}
	for i, in := range items {
		c.Edges = append(c.Edges, model.IntentEdge{Cursor: cursors[i], Node: in})
	}
	return c, nil
}

func (r *Resolver) dependencies(ctx context.Context, resource string, direction *capstan.Direction, depth *int) (*model.DependencyGraph, error) {
	id, err := localID(resource, kindResource)
	if err != nil {
		return nil, err
	}
	dir, d := capstan.Outgoing, 3
	if direction != nil {
		dir = *direction
	}
	if depth != nil {
		d = *depth
	}
	root, deps, err := r.Service.Dependencies(ctx, id, dir, d)
	if err != nil {
		return nil, err
	}
	g := &model.DependencyGraph{Root: root, Direction: dir, Depth: d, Edges: []model.DependencyEdge{}}
	for _, dep := range deps {
		e := model.DependencyEdge{From: dep.From, To: dep.Resource.Key(), Relationship: dep.Relationship, Depth: dep.Depth, Resource: dep.Resource}
		if dir == capstan.Incoming {
			e.From, e.To = dep.Resource.Key(), dep.From
		}
		g.Edges = append(g.Edges, e)
	}
	return g, nil
}

func (r *Resolver) paths(ctx context.Context, from, to string, direction *capstan.Direction, max, depth *int) ([]capstan.ResourcePath, error) {
	fromID, err := localID(from, kindResource)
	if err != nil {
		return nil, err
	}
	toID, err := localID(to, kindResource)
	if err != nil {
		return nil, err
	}
	q := capstan.PathQuery{From: fromID, To: toID, Direction: capstan.Outgoing, Max: 3, MaxDepth: 6}
	if direction != nil {
		q.Direction = *direction
	}
	if max != nil {
		q.Max = *max
	}
	if depth != nil {
		q.MaxDepth = *depth
	}
	paths, err := r.Service.Paths(ctx, q)
	if paths == nil && err == nil {
		paths = []capstan.ResourcePath{}
	}
	return paths, err
}

// impactDependents pages an impact's dependents, by key: the cursors are
// the resources list's.
func (r *Resolver) impactDependents(im *capstan.Impact, first *int, after *string) (*model.ResourceConnection, error) {
	p, err := paginate(im.Dependents, (*capstan.Resource).Key, first, after)
	if err != nil {
		return nil, err
	}
	c := &model.ResourceConnection{PageInfo: &p.info, TotalCount: p.total, Edges: []model.ResourceEdge{}}
	for i, res := range p.items {
		c.Edges = append(c.Edges, model.ResourceEdge{Cursor: p.cursors[i], Node: res})
	}
	return c, nil
}

func (r *Resolver) resourceGraph(ctx context.Context, root string, direction *capstan.Direction, depth *int, filter *capstan.GraphFilter, first *int, after *string) (*capstan.Neighbourhood, error) {
	id, err := localID(root, kindResource)
	if err != nil {
		return nil, err
	}
	dir, d, page := capstan.Both, 2, capstan.GraphPage{First: 200}
	if direction != nil {
		dir = *direction
	}
	if depth != nil {
		d = *depth
	}
	if first != nil {
		page.First = *first
	}
	if page.After, err = afterKey(after); err != nil {
		return nil, err
	}
	var f capstan.GraphFilter
	if filter != nil {
		f = *filter
	}
	n, err := r.Service.ResourceGraph(ctx, id, dir, d, f, page)
	if err != nil {
		return nil, err
	}
	if n.Edges == nil {
		n.Edges = []capstan.Link{}
	}
	return n, nil
}

// graphPageInfo is where a page of a neighbourhood is.
func graphPageInfo(n *capstan.Neighbourhood) *model.PageInfo {
	info := &model.PageInfo{HasPreviousPage: n.After != "", HasNextPage: n.HasMore}
	cursors := make([]string, len(n.Nodes))
	for i, g := range n.Nodes {
		cursors[i] = cursor(g.Resource.Key())
	}
	setEnds(info, cursors)
	return info
}
