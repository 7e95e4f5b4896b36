package embedded

import (
	"context"
	"slices"

	"github.com/capstan-dev/capstan"
)

// Paths finds every simple path of the q.Max shortest lengths between two
// resources, breadth first over the relationships and the incoming index,
// holding at most capstan.PathSearchBudget partial paths.
func (s *Store) Paths(ctx context.Context, org string, q capstan.PathQuery) ([]capstan.ResourcePath, error) {
	if err := capstan.CheckOrg(org); err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	var found []capstan.ResourcePath
	err := s.view(ctx, "embedded.Paths", func(tx *rtx) error {
		w := &pathWalk{tx: tx, org: org, q: q, byKey: map[string]*capstan.Resource{}}
		from, err := w.end(q.From)
		if err != nil {
			return err
		}
		to, err := w.end(q.To)
		if err != nil {
			return err
		}
		found, err = w.search(ctx, from, to)
		return err
	})
	if err != nil {
		return nil, err
	}
	return capstan.SelectPaths(found, q.Max), nil
}

// pathWalk is one search's state: its resources read once each.
type pathWalk struct {
	tx    *rtx
	org   string
	q     capstan.PathQuery
	byKey map[string]*capstan.Resource
	held  int // partial paths made so far
}

func (w *pathWalk) end(id string) (*capstan.Resource, error) {
	r, err := loadResource(w.tx, w.org, id)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, capstan.NotFound("resource", id)
	}
	w.byKey[r.Key()] = r
	return r, nil
}

// search extends paths one hop a round. A path that reaches to is found
// and not extended; the search ends after the round that found paths of
// q.Max lengths, or at q.MaxDepth. A round past the budget stops holding
// partial paths; it is an error only when another round is needed.
func (w *pathWalk) search(ctx context.Context, from, to *capstan.Resource) ([]capstan.ResourcePath, error) {
	frontier := []capstan.ResourcePath{{Resources: []*capstan.Resource{from}}}
	var found []capstan.ResourcePath
	lengths := 0
	for depth := 1; depth <= w.q.MaxDepth && len(frontier) > 0 && lengths < w.q.Max; depth++ {
		if err := ctx.Err(); err != nil {
			return nil, capstan.Errorf(capstan.EUNAVAILABLE, "embedded.Paths: %v", err)
		}
		last := depth == w.q.MaxDepth // no round follows: nothing to hold
		var next []capstan.ResourcePath
		foundHere, over := false, false
		for _, p := range frontier {
			hops, err := w.hops(p.Resources[len(p.Resources)-1])
			if err != nil {
				return nil, err
			}
			for _, h := range hops {
				if onPath(p, h.resource) {
					continue
				}
				if h.resource.ID == to.ID {
					found, foundHere = append(found, extend(p, h)), true
					continue
				}
				if last || over {
					continue
				}
				if w.held++; w.held > capstan.PathSearchBudget {
					over, next = true, nil
					continue
				}
				next = append(next, extend(p, h))
			}
		}
		if foundHere {
			lengths++
		}
		if over && lengths < w.q.Max && !last {
			return nil, capstan.PathSearchTooLarge(w.q)
		}
		frontier = next
	}
	return found, nil
}

// pathStep is one hop out of a resource, and where it leads.
type pathStep struct {
	hop      capstan.Link
	resource *capstan.Resource
}

// hops are r's hops in the query's direction: its own relationships
// (outgoing), the relationships of others that point at it (incoming),
// or both.
func (w *pathWalk) hops(r *capstan.Resource) ([]pathStep, error) {
	var out []pathStep
	if w.q.Direction != capstan.Incoming {
		for _, rel := range r.Relationships {
			t, err := w.byResourceKey(rel.Target)
			if err != nil {
				return nil, err
			}
			if t != nil {
				out = append(out, pathStep{capstan.Link{Holder: r.Key(), Target: rel.Target, Relationship: rel.Type}, t})
			}
		}
	}
	if w.q.Direction != capstan.Outgoing {
		err := eachIncoming(w.tx, w.org, r.Key(), func(typ capstan.RelationshipType, sourceID string) (bool, error) {
			src, err := loadResource(w.tx, w.org, sourceID)
			if err != nil || src == nil {
				return err == nil, err
			}
			w.byKey[src.Key()] = src
			out = append(out, pathStep{capstan.Link{Holder: src.Key(), Target: r.Key(), Relationship: typ}, src})
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (w *pathWalk) byResourceKey(k string) (*capstan.Resource, error) {
	if r, ok := w.byKey[k]; ok {
		return r, nil
	}
	r, err := loadByKey(w.tx, w.org, k)
	if err != nil {
		return nil, err
	}
	w.byKey[k] = r
	return r, nil
}

func onPath(p capstan.ResourcePath, r *capstan.Resource) bool {
	return slices.ContainsFunc(p.Resources, func(x *capstan.Resource) bool { return x.ID == r.ID })
}

// extend is p with one more hop, sharing nothing p's other extensions
// change.
func extend(p capstan.ResourcePath, s pathStep) capstan.ResourcePath {
	return capstan.ResourcePath{
		Resources: append(slices.Clip(p.Resources), s.resource),
		Hops:      append(slices.Clip(p.Hops), s.hop),
	}
}
