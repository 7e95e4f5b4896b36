package embedded

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/capstan-dev/capstan"
)

// ImportResources upserts resources by key in one transaction.
func (s *Store) ImportResources(ctx context.Context, org string, rs []*capstan.Resource) (capstan.ImportResult, error) {
	var res capstan.ImportResult
	if err := capstan.CheckImport(org, rs); err != nil {
		return res, err
	}
	batch := make(map[string]bool, len(rs))
	for _, r := range rs {
		batch[r.Key()] = true
	}
	defer s.cache.invalidate(org)
	err := s.update(ctx, "embedded.ImportResources", func(w *writer) error {
		tx := w.tx
		res = capstan.ImportResult{} // a batch that is committed again runs this again
		keys := tx.Bucket(bResourceKeys)
		var missing capstan.Problems
		for _, r := range rs {
			for _, rel := range r.Relationships {
				if !batch[rel.Target] && keys.Get(key(org, rel.Target)) == nil {
					missing.Addf("resource %s: %s target %s does not exist", r.Key(), rel.Type, rel.Target)
				}
			}
		}
		if err := missing.Err("import"); err != nil {
			return err
		}
		for _, r := range rs {
			old, err := loadByKey(tx, org, r.Key())
			if err != nil {
				return err
			}
			if old == nil {
				s.touch(&r.Meta, org, true)
				res.Created++
			} else {
				r.Meta = old.Meta
				r.ActiveOperationID, r.LastOperationID = old.ActiveOperationID, old.LastOperationID
				s.touch(&r.Meta, org, false)
				res.Updated++
			}
			if err := writeResource(w, org, old, r); err != nil {
				return err
			}
		}
		return nil
	})
	return res, err
}

// CreateResource stores a new resource.
func (s *Store) CreateResource(ctx context.Context, org string, r *capstan.Resource) error {
	if err := capstan.CheckResourceWrite(org, r); err != nil {
		return err
	}
	defer s.cache.invalidate(org)
	var m capstan.Meta
	err := s.update(ctx, "embedded.CreateResource", func(w *writer) (err error) {
		m, err = s.createResource(w, org, r)
		return err
	})
	if err == nil {
		r.Meta = m
	}
	return err
}

// createResource stores a new resource inside tx and returns its Meta.
func (s *Store) createResource(w *writer, org string, r *capstan.Resource) (capstan.Meta, error) {
	tx := w.tx
	if tx.Bucket(bResourceKeys).Get(key(org, r.Key())) != nil {
		return capstan.Meta{}, capstan.Errorf(capstan.ECONFLICT, "resource %s already exists", r.Key())
	}
	if err := checkTargets(tx, org, r); err != nil {
		return capstan.Meta{}, err
	}
	m := r.Meta
	s.touch(&m, org, true)
	r2 := *r
	r2.Meta = m
	return m, writeResource(w, org, nil, &r2)
}

// UpdateResource writes r when its version is current.
func (s *Store) UpdateResource(ctx context.Context, org string, r *capstan.Resource) error {
	if err := capstan.CheckResourceWrite(org, r); err != nil {
		return err
	}
	defer s.cache.invalidate(org)
	var m capstan.Meta
	err := s.update(ctx, "embedded.UpdateResource", func(w *writer) (err error) {
		m, err = s.updateResource(w, org, r)
		return err
	})
	if err == nil {
		r.Meta = m
	}
	return err
}

// updateResource writes r inside tx when its version is current and
// returns its new Meta.
func (s *Store) updateResource(w *writer, org string, r *capstan.Resource) (capstan.Meta, error) {
	tx := w.tx
	old, err := loadResource(tx, org, r.ID)
	if err != nil {
		return capstan.Meta{}, err
	}
	if old == nil {
		return capstan.Meta{}, capstan.NotFound("resource", r.ID)
	}
	if old.Version != r.Version {
		return capstan.Meta{}, capstan.StaleVersion("resource", r.Key(), old.Version, r.Version)
	}
	if old.Key() != r.Key() {
		if tx.Bucket(bResourceKeys).Get(key(org, r.Key())) != nil {
			return capstan.Meta{}, capstan.Errorf(capstan.ECONFLICT, "resource %s already exists", r.Key())
		}
	}
	if err := checkTargets(tx, org, r); err != nil {
		return capstan.Meta{}, err
	}
	m := r.Meta
	m.CreatedAt = old.CreatedAt
	s.touch(&m, org, false)
	r2 := *r
	r2.Meta = m
	return m, writeResource(w, org, old, &r2)
}

func checkTargets(tx *rtx, org string, r *capstan.Resource) error {
	var p capstan.Problems
	for _, rel := range r.Relationships {
		if tx.Bucket(bResourceKeys).Get(key(org, rel.Target)) == nil {
			p.Addf("%s target %s does not exist", rel.Type, rel.Target)
		}
	}
	return p.Err("resource " + r.Key())
}

// writeResource stores r and moves its index entries from old (nil when new).
func writeResource(w *writer, org string, old, r *capstan.Resource) error {
	if old != nil {
		if err := w.delete(bResourceKeys, key(org, old.Key())); err != nil {
			return err
		}
		for _, pc := range old.ProvidedCapabilities {
			if err := w.delete(bProvides, key(org, pc.Capability, old.ID)); err != nil {
				return err
			}
		}
		for _, rel := range old.Relationships {
			if err := w.delete(bIncoming, key(org, rel.Target, string(rel.Type), old.ID)); err != nil {
				return err
			}
		}
	}
	if err := w.put(bResourceKeys, key(org, r.Key()), []byte(r.ID)); err != nil {
		return err
	}
	for _, pc := range r.ProvidedCapabilities {
		if err := w.put(bProvides, key(org, pc.Capability, r.ID), nil); err != nil {
			return err
		}
	}
	for _, rel := range r.Relationships {
		if err := w.put(bIncoming, key(org, rel.Target, string(rel.Type), r.ID), nil); err != nil {
			return err
		}
	}
	return w.putJSON(bResources, key(org, r.ID), r)
}

func loadResource(tx *rtx, org, id string) (*capstan.Resource, error) {
	var r capstan.Resource
	ok, err := getJSON(tx.Bucket(bResources), key(org, id), &r)
	if !ok || err != nil {
		return nil, err
	}
	return &r, nil
}

func loadByKey(tx *rtx, org, k string) (*capstan.Resource, error) {
	id := tx.Bucket(bResourceKeys).Get(key(org, k))
	if id == nil {
		return nil, nil
	}
	return loadResource(tx, org, string(id))
}

// GetResource returns a resource by id.
func (s *Store) GetResource(ctx context.Context, org, id string) (*capstan.Resource, error) {
	var r *capstan.Resource
	err := s.view(ctx, "embedded.GetResource", func(tx *rtx) (err error) {
		r, err = loadResource(tx, org, id)
		return err
	})
	if err == nil && r == nil {
		err = capstan.NotFound("resource", id)
	}
	return r, err
}

// GetResourceByKey returns a resource by key.
func (s *Store) GetResourceByKey(ctx context.Context, org, k string) (*capstan.Resource, error) {
	var r *capstan.Resource
	err := s.view(ctx, "embedded.GetResourceByKey", func(tx *rtx) (err error) {
		r, err = loadByKey(tx, org, k)
		return err
	})
	if err == nil && r == nil {
		err = capstan.NotFound("resource", k)
	}
	return r, err
}

// GetResources returns resources by id; missing ids give nil entries.
func (s *Store) GetResources(ctx context.Context, org string, ids []string) ([]*capstan.Resource, error) {
	out := make([]*capstan.Resource, len(ids))
	err := s.view(ctx, "embedded.GetResources", func(tx *rtx) error {
		for i, id := range ids {
			r, err := loadResource(tx, org, id)
			if err != nil {
				return err
			}
			out[i] = r
		}
		return nil
	})
	return out, err
}

// GetResourcesByKey returns resources by key; missing keys give nil entries.
func (s *Store) GetResourcesByKey(ctx context.Context, org string, keys []string) ([]*capstan.Resource, error) {
	out := make([]*capstan.Resource, len(keys))
	err := s.view(ctx, "embedded.GetResourcesByKey", func(tx *rtx) error {
		for i, k := range keys {
			r, err := loadByKey(tx, org, k)
			if err != nil {
				return err
			}
			out[i] = r
		}
		return nil
	})
	return out, err
}

// ListResources returns a page of resources ordered by key.
func (s *Store) ListResources(ctx context.Context, org string, f capstan.ResourceFilter) ([]*capstan.Resource, int, error) {
	var out []*capstan.Resource
	total := 0
	limit := capstan.LimitOr(f.Limit, 100)
	err := s.view(ctx, "embedded.ListResources", func(tx *rtx) error {
		p := prefix(org)
		return scan(tx.Bucket(bResourceKeys), p, nil, func(k, v []byte) (bool, error) {
			rk := string(k[len(p):])
			if f.Type != "" {
				if typ, _, _ := capstan.SplitResourceKey(rk); typ != f.Type {
					return true, nil
				}
			}
			r, err := loadResource(tx, org, string(v))
			if err != nil || r == nil {
				return err == nil, err
			}
			if !matchesFilter(r, f) {
				return true, nil
			}
			total++
			if (f.After == "" || rk > f.After) && len(out) < limit {
				out = append(out, r)
			}
			return true, nil
		})
	})
	return out, total, err
}

func matchesFilter(r *capstan.Resource, f capstan.ResourceFilter) bool {
	if f.Environment != "" && r.Environment != f.Environment {
		return false
	}
	if f.Lifecycle != "" && r.LifecycleStatus != f.Lifecycle {
		return false
	}
	if f.Capability != "" && r.Provides(f.Capability) == nil {
		return false
	}
	if len(f.Health) > 0 && !slices.Contains(f.Health, r.HealthStatus) {
		return false
	}
	if f.Search != "" && !capstan.ResourceMatches(r, f.Search) {
		return false
	}
	return true
}

func loadCapabilities(tx *rtx, org string) (map[string]*capstan.CapabilityDefinition, error) {
	defs := map[string]*capstan.CapabilityDefinition{}
	err := scan(tx.Bucket(bCapabilities), prefix(org), nil, func(_, v []byte) (bool, error) {
		var d capstan.CapabilityDefinition
		if err := json.Unmarshal(v, &d); err != nil {
			return false, err
		}
		defs[d.Key] = &d
		return true, nil
	})
	return defs, err
}

// TopologyValue finds key on the resource or what it runs on.
func (s *Store) TopologyValue(ctx context.Context, org, resourceID, k string, maxDepth int) (capstan.TopologyHit, error) {
	var hit capstan.TopologyHit
	err := s.view(ctx, "embedded.TopologyValue", func(tx *rtx) error {
		start, err := loadResource(tx, org, resourceID)
		if err != nil {
			return err
		}
		if start == nil {
			return capstan.NotFound("resource", resourceID)
		}
		type step struct {
			r    *capstan.Resource
			path []string
		}
		queue := []step{{start, []string{start.Key()}}}
		seen := map[string]bool{start.Key(): true}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			if v, ok := cur.r.Value(k); ok {
				hit = capstan.TopologyHit{Found: true, Value: v, From: cur.r.Key(), Path: cur.path}
				return nil
			}
			if len(cur.path) > maxDepth {
				continue
			}
			for _, rel := range cur.r.Relationships {
				if rel.Type != capstan.RelRunsOn || seen[rel.Target] {
					continue
				}
				seen[rel.Target] = true
				next, err := loadByKey(tx, org, rel.Target)
				if err != nil {
					return err
				}
				if next != nil {
					queue = append(queue, step{next, append(slices.Clone(cur.path), next.Key())})
				}
			}
		}
		return nil
	})
	return hit, err
}

// Dependencies walks relationships breadth first up to depth hops.
func (s *Store) Dependencies(ctx context.Context, org, resourceID string, dir capstan.Direction, depth, limit int) ([]capstan.Dependency, error) {
	var out []capstan.Dependency
	err := s.view(ctx, "embedded.Dependencies", func(tx *rtx) error {
		start, err := loadResource(tx, org, resourceID)
		if err != nil {
			return err
		}
		if start == nil {
			return capstan.NotFound("resource", resourceID)
		}
		frontier := []*capstan.Resource{start}
		seen := map[string]bool{start.ID: true}
		for d := 1; d <= depth && len(frontier) > 0; d++ {
			var next []*capstan.Resource
			for _, cur := range frontier {
				edges, err := neighbours(tx, org, cur, dir)
				if err != nil {
					return err
				}
				for _, e := range edges {
					if seen[e.Resource.ID] {
						continue
					}
					seen[e.Resource.ID] = true
					if len(out) == limit {
						return capstan.WalkTooLarge(limit, depth)
					}
					e.Depth = d
					out = append(out, e)
					next = append(next, e.Resource)
				}
			}
			frontier = next
		}
		return nil
	})
	return out, err
}

func neighbours(tx *rtx, org string, r *capstan.Resource, dir capstan.Direction) ([]capstan.Dependency, error) {
	var out []capstan.Dependency
	if dir == capstan.Outgoing {
		for _, rel := range r.Relationships {
			t, err := loadByKey(tx, org, rel.Target)
			if err != nil {
				return nil, err
			}
			if t != nil {
				out = append(out, capstan.Dependency{Resource: t, Relationship: rel.Type, From: r.Key()})
			}
		}
		return out, nil
	}
	err := eachIncoming(tx, org, r.Key(), func(typ capstan.RelationshipType, sourceID string) (bool, error) {
		src, err := loadResource(tx, org, sourceID)
		if err != nil || src == nil {
			return err == nil, err
		}
		out = append(out, capstan.Dependency{Resource: src, Relationship: typ, From: r.Key()})
		return true, nil
	})
	return out, err
}
