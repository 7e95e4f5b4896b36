package cypher

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

const qResourceVersion = `
MATCH (r:Resource {uid: $uid})
SET r.locked = true REMOVE r.locked
RETURN r.version AS version, r.ukey AS ukey, r.created AS created, r.json AS json`

const qResourceKeyTaken = `
MATCH (r:Resource {ukey: $ukey})
RETURN r.uid AS uid`

// CreateResource stores a new resource.
func (s *Store) CreateResource(ctx context.Context, org string, r *capstan.Resource) error {
	if err := capstan.CheckResourceWrite(org, r); err != nil {
		return err
	}
	res, err := s.write(ctx, "cypher.CreateResource", func(tx neo4j.ManagedTransaction) (any, error) {
		return s.createResource(ctx, tx, org, r)
	})
	if err == nil {
		r.Meta = res.(capstan.Meta)
	}
	return err
}

// UpdateResource writes r when its version is current.
func (s *Store) UpdateResource(ctx context.Context, org string, r *capstan.Resource) error {
	if err := capstan.CheckResourceWrite(org, r); err != nil {
		return err
	}
	res, err := s.write(ctx, "cypher.UpdateResource", func(tx neo4j.ManagedTransaction) (any, error) {
		return s.updateResource(ctx, tx, org, r)
	})
	if err == nil {
		r.Meta = res.(capstan.Meta)
	}
	return err
}

// createResource stores a new resource inside tx and returns its Meta,
// leaving r as it was (a retried transaction starts over).
func (s *Store) createResource(ctx context.Context, tx neo4j.ManagedTransaction, org string, r *capstan.Resource) (capstan.Meta, error) {
	if taken, err := exists(ctx, tx, qResourceKeyTaken, map[string]any{"ukey": uid(org, r.Key())}); err != nil || taken {
		if err == nil {
			err = capstan.Errorf(capstan.ECONFLICT, "resource %s already exists", r.Key())
		}
		return capstan.Meta{}, err
	}
	c := *r
	c.Meta = capstan.Meta{ID: r.ID}
	s.touch(&c.Meta, org, true)
	return c.Meta, s.writeOne(ctx, tx, org, &c)
}

// updateResource writes r inside tx when its version is current and
// returns its new Meta, leaving r as it was.
func (s *Store) updateResource(ctx context.Context, tx neo4j.ManagedTransaction, org string, r *capstan.Resource) (capstan.Meta, error) {
	m, err := checkVersion(ctx, tx, "resource", r.Key(), uid(org, r.ID), r.Version, qResourceVersion)
	if err != nil {
		return capstan.Meta{}, err
	}
	if newKey := uid(org, r.Key()); newKey != str(m["ukey"]) {
		if taken, err := exists(ctx, tx, qResourceKeyTaken, map[string]any{"ukey": newKey}); err != nil || taken {
			if err == nil {
				err = capstan.Errorf(capstan.ECONFLICT, "resource %s already exists", r.Key())
			}
			return capstan.Meta{}, err
		}
		if _, err := tx.Run(ctx, `MATCH (r:Resource {uid: $uid}) SET r.ukey = $ukey`, map[string]any{"uid": uid(org, r.ID), "ukey": newKey}); err != nil {
			return capstan.Meta{}, err
		}
	}
	c := *r
	c.Meta.CreatedAt = parseTime(str(m["created"]))
	s.touch(&c.Meta, org, false)
	return c.Meta, s.writeOne(ctx, tx, org, &c, uid(org, r.Key()))
}

func (s *Store) writeOne(ctx context.Context, tx neo4j.ManagedTransaction, org string, r *capstan.Resource, existing ...string) error {
	return writeResources(ctx, tx, org, []*capstan.Resource{r}, existing)
}

func exists(ctx context.Context, tx neo4j.ManagedTransaction, q string, params map[string]any) (bool, error) {
	recs, err := collect(ctx, tx, q, params)
	return len(recs) > 0, err
}

// queryJSON runs a read query whose rows have a json column and decodes them.
func queryJSON[T any](ctx context.Context, tx runner, q string, params map[string]any) ([]*T, error) {
	recs, err := collect(ctx, tx, q, params)
	if err != nil {
		return nil, err
	}
	out := make([]*T, 0, len(recs))
	for _, rec := range recs {
		js, _ := rec.Get("json")
		if js == nil {
			continue
		}
		var t T
		if err := json.Unmarshal([]byte(str(js)), &t); err != nil {
			return nil, err
		}
		out = append(out, &t)
	}
	return out, nil
}

func (s *Store) readJSON(ctx context.Context, op, q string, params map[string]any) ([]*capstan.Resource, error) {
	res, err := s.readOne(ctx, op, func(tx runner) (any, error) {
		return queryJSON[capstan.Resource](ctx, tx, q, params)
	})
	if err != nil {
		return nil, err
	}
	return res.([]*capstan.Resource), nil
}

// GetResource returns a resource by id.
func (s *Store) GetResource(ctx context.Context, org, id string) (*capstan.Resource, error) {
	rs, err := s.readJSON(ctx, "cypher.GetResource", `MATCH (r:Resource {uid: $uid}) RETURN r.json AS json`, map[string]any{"uid": uid(org, id)})
	if err == nil && len(rs) == 0 {
		err = capstan.NotFound("resource", id)
	}
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// GetResourceByKey returns a resource by key.
func (s *Store) GetResourceByKey(ctx context.Context, org, key string) (*capstan.Resource, error) {
	rs, err := s.readJSON(ctx, "cypher.GetResourceByKey", `MATCH (r:Resource {ukey: $ukey}) RETURN r.json AS json`, map[string]any{"ukey": uid(org, key)})
	if err == nil && len(rs) == 0 {
		err = capstan.NotFound("resource", key)
	}
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// GetResources returns resources by id; missing ids give nil entries.
func (s *Store) GetResources(ctx context.Context, org string, ids []string) ([]*capstan.Resource, error) {
	uids := make([]string, len(ids))
	for i, id := range ids {
		uids[i] = uid(org, id)
	}
	rs, err := s.readJSON(ctx, "cypher.GetResources", `UNWIND $uids AS u MATCH (r:Resource {uid: u}) RETURN r.json AS json`, map[string]any{"uids": uids})
	if err != nil {
		return nil, err
	}
	byID := map[string]*capstan.Resource{}
	for _, r := range rs {
		byID[r.ID] = r
	}
	out := make([]*capstan.Resource, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out, nil
}

// GetResourcesByKey returns resources by key; missing keys give nil entries.
func (s *Store) GetResourcesByKey(ctx context.Context, org string, keys []string) ([]*capstan.Resource, error) {
	ukeys := make([]string, len(keys))
	for i, k := range keys {
		ukeys[i] = uid(org, k)
	}
	rs, err := s.readJSON(ctx, "cypher.GetResourcesByKey", qGetResourcesByKey, map[string]any{"ukeys": ukeys})
	if err != nil {
		return nil, err
	}
	byKey := map[string]*capstan.Resource{}
	for _, r := range rs {
		byKey[r.Key()] = r
	}
	out := make([]*capstan.Resource, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out, nil
}

// Resources are found and ordered by ukey ($org|key): within one
// organization it sorts as the key, and its unique index serves both. The
// hint holds the planner to that range seek: with a capability filter it
// sometimes started from the capability and hash-joined instead, losing
// the key order (the query-plan test caught it about one run in five).
const qResourceFilter = `
MATCH (r:Resource)
USING INDEX SEEK r:Resource(ukey)
WHERE r.ukey STARTS WITH $prefix AND ($type = '' OR r.type = $type) AND ($env = '' OR r.environment = $env)
  AND ($lifecycle = '' OR r.lifecycle = $lifecycle)
  AND (size($health) = 0 OR r.health IN $health)
  AND ($cap = '' OR EXISTS { (r)-[:PROVIDES]->(:Profile)-[:OF]->(c:Capability) WHERE c.uid = $cap })`

// qSearch narrows the filter to keys or names containing $search; only
// searches carry it, so a plain list runs the query the plan test checks.
const qSearch = `
  AND (toLower(r.key) CONTAINS $search OR toLower(r.name) CONTAINS $search)`

// QueryListResources is exported for the query-plan test.
const QueryListResources = qListResources

const qPage = `
  AND r.ukey > $after
RETURN r.json AS json
ORDER BY r.ukey
LIMIT $limit`

const qListResources = qResourceFilter + qPage

const qCountResources = qResourceFilter + `
RETURN count(r) AS total`

// ListResources returns a page of resources ordered by key and the total.
func (s *Store) ListResources(ctx context.Context, org string, f capstan.ResourceFilter) ([]*capstan.Resource, int, error) {
	health := make([]string, 0, len(f.Health))
	for _, h := range f.Health {
		health = append(health, string(h))
	}
	params := map[string]any{"prefix": uid(org, ""), "type": f.Type, "env": f.Environment, "lifecycle": string(f.Lifecycle),
		"health": health, "cap": "", "after": uid(org, f.After), "limit": capstan.LimitOr(f.Limit, 100)}
	if f.Capability != "" {
		params["cap"] = uid(org, f.Capability)
	}
	if f.Search != "" {
		params["search"] = strings.ToLower(f.Search)
		return listPage[capstan.Resource](s, ctx, "cypher.ListResources", qResourceFilter+qSearch+qPage,
			qResourceFilter+qSearch+"\nRETURN count(r) AS total", params)
	}
	return listPage[capstan.Resource](s, ctx, "cypher.ListResources", qListResources, qCountResources, params)
}

const qGetResourcesByKey = `UNWIND $ukeys AS k MATCH (r:Resource {ukey: k}) USING INDEX SEEK r:Resource(ukey) RETURN r.json AS json`
