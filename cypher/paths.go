package cypher

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

// qPaths finds every simple path of the $groups shortest lengths from a
// to b in one traversal (GQL's SHORTEST k GROUPS; Neo4j 5.26 takes k only
// as a literal: GROUPS_K, the validated q.Max). The pattern's WHERE is a
// pre-filter, applied before the selection: the hops' bound and that no
// resource is on a path twice. ARROW is the direction's. The paths are
// ordered as capstan.SelectPaths orders them (relationship types sort
// alike in either case) and cut there, so only the kept ones carry their
// resources back.
const qPaths = `
MATCH (a:Resource {uid: $from}), (b:Resource {uid: $to})
MATCH p = SHORTEST GROUPS_K GROUPS ((a) (()ARROW(x:Resource)){1,10} (b)
  WHERE size(x) <= $depth AND NOT a IN x AND all(i IN range(0, size(x) - 2) WHERE NOT x[i] IN x[i + 1..]))
WITH p ORDER BY length(p), [n IN nodes(p) | n.key], [r IN relationships(p) | [startNode(r).key, type(r)]]
LIMIT $max
RETURN [n IN nodes(p) | n.json] AS resources,
       [r IN relationships(p) | [startNode(r).key, type(r), endNode(r).key]] AS hops`

const relPattern = `[:RUNS_ON|DEPENDS_ON|USES|CONNECTS_TO|PART_OF]`

var pathQueries = map[capstan.Direction]string{
	capstan.Outgoing: strings.Replace(qPaths, "ARROW", "-"+relPattern+"->", 1),
	capstan.Incoming: strings.Replace(qPaths, "ARROW", "<-"+relPattern+"-", 1),
	capstan.Both:     strings.Replace(qPaths, "ARROW", "-"+relPattern+"-", 1),
}

// Paths finds the shortest paths between two resources, bounded on the
// server by capstan.PathSearchTimeout.
func (s *Store) Paths(ctx context.Context, org string, q capstan.PathQuery) ([]capstan.ResourcePath, error) {
	if err := capstan.CheckOrg(org); err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	res, err := s.readBounded(ctx, "cypher.Paths", capstan.PathSearchTimeout, func(tx neo4j.ManagedTransaction) (any, error) {
		for _, id := range []string{q.From, q.To} {
			found, err := exists(ctx, tx, `MATCH (r:Resource {uid: $uid}) RETURN r.id`, map[string]any{"uid": uid(org, id)})
			if err != nil {
				return nil, err
			}
			if !found {
				return nil, capstan.NotFound("resource", id)
			}
		}
		query := strings.Replace(pathQueries[q.Direction], "GROUPS_K", strconv.Itoa(q.Max), 1)
		return collect(ctx, tx, query, map[string]any{"from": uid(org, q.From), "to": uid(org, q.To), "depth": q.MaxDepth, "max": q.Max})
	})
	if timedOut(err) {
		return nil, capstan.PathSearchTooLarge(q)
	}
	if err != nil {
		return nil, err
	}
	var out []capstan.ResourcePath
	for _, rec := range res.([]*neo4j.Record) {
		p, err := decodePath(rec.AsMap())
		if err != nil {
			return nil, capstan.Wrap("cypher.Paths", err)
		}
		out = append(out, p)
	}
	return capstan.SelectPaths(out, q.Max), nil
}

func decodePath(m map[string]any) (capstan.ResourcePath, error) {
	var p capstan.ResourcePath
	for _, v := range m["resources"].([]any) {
		var r capstan.Resource
		if err := json.Unmarshal([]byte(str(v)), &r); err != nil {
			return p, err
		}
		p.Resources = append(p.Resources, &r)
	}
	for _, v := range m["hops"].([]any) {
		h := v.([]any)
		p.Hops = append(p.Hops, capstan.Link{Holder: str(h[0]), Relationship: relTypes[str(h[1])], Target: str(h[2])})
	}
	return p, nil
}
