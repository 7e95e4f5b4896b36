package cypher

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

// Capability resolution is one traversal: from the wanted capability back
// through bounded IMPLIES to every capability that implies it (sources),
// out to the profiles of what the organization's resources offer as them,
// and each constraint checked against the profile's scope, attributes,
// environment and lifecycle. The database also selects what to return (the
// rule of capstan.SelectCandidates): the asked page of passing candidates in
// rank order, the nearest misses up to $keep, and for the rest only how
// many failed each check. One row comes back, whatever the catalog's size.
const querySources = `
MATCH path = (src:Capability)-[:IMPLIES*0..4]->(want:Capability {uid: $want})
WITH src, path ORDER BY length(path)
WITH src, head(collect(CASE length(path) WHEN 0 THEN [] ELSE [n IN nodes(path) | n.key] END)) AS via`

// failedChecks is the list of checks a provider fails: lifecycle first,
// then $checks in order. Facts come from its profile pf; the name (when
// name is true) from its resource r.
func failedChecks(name bool) string {
	v := `CASE c.key WHEN 'environment' THEN coalesce(pf['s:environment'], pf['a:environment'], pf.environment)`
	if name {
		v += ` WHEN 'name' THEN r.name`
	}
	v += ` ELSE coalesce(pf[c.s], pf[c.a]) END`
	return `CASE WHEN pf.lifecycle IN $lifecycles THEN [] ELSE ['lifecycle'] END +
  [c IN $checks WHERE NOT coalesce(CASE c.mode
     WHEN 'in' THEN ` + v + ` IN c.want
     WHEN 'min' THEN ` + v + ` >= c.want
     WHEN 'max' THEN ` + v + ` <= c.want
     ELSE ` + v + ` = c.want END, false) | c.key]`
}

// firstProviders returns, per offer x, the PROVIDES edges of its first
// providers in key order: a seek on the provides_profile_key index that
// stops after the limit (ordering by both indexed properties is what lets
// the planner take the index's order instead of sorting every provider).
// The hint holds the planner to the seek: left to itself it scanned the
// whole index now and then (the query-plan test caught it).
func firstProviders(limit string) string {
	return `
  CALL (x) {
    MATCH ()-[p:PROVIDES]->()
    USING INDEX SEEK p:PROVIDES(profile, key)
    WHERE p.profile = x.uid AND p.key > ''
    RETURN p ORDER BY p.profile, p.key LIMIT ` + limit + `
  }`
}

// candidateRow and the kept projection are shared by both queries.
const (
	candidateRow = `{r: startNode(p), p: p, capability: x.capability, via: x.via, failed: x.failed}`
	keptRow      = `{id: x.r.id, type: x.r.type, name: x.r.name, environment: x.r.environment,
          lifecycle: x.r.lifecycle, health: x.r.health, provided: x.p.json, capability: x.capability, via: x.via, failed: x.failed,
          consumers: COLLECT { WITH x.r AS t MATCH (c:Resource)-[:RUNS_ON|DEPENDS_ON|USES|CONNECTS_TO]->(t)
            WHERE coalesce(c.lifecycle, '') <> 'deleted' AND c.ukey <> $owner AND NOT EXISTS { (c)-[:PART_OF]->(:Resource {ukey: $owner}) }
            WITH DISTINCT c.type + '/' + c.name AS key LIMIT $consumers RETURN key }}`
)

// QueryCandidates judges each distinct offer (profile) once and counts its
// providers by the profile's degree; it reads providers only for what it
// returns: the first $upto of each passing offer and the first $keep of
// each failing one, by key, through the provides_profile_key index. Its
// cost grows with the number of distinct offers, not with the catalog. It
// cannot check a resource's name (profiles leave it out): a query with a
// name constraint is QueryCandidatesScan, one for one provider
// QueryCandidatesOf.
var QueryCandidates = querySources + `
MATCH (src)<-[:OF]-(pf:Profile)
WITH src, via, pf, COUNT { (pf)<-[:PROVIDES]-() } AS n WHERE n > 0
WITH collect({capability: src.key, via: via, uid: pf.uid, n: n, failed: ` + failedChecks(false) + `}) AS offers
WITH offers, reduce(s = 0, x IN offers | s + x.n) AS considered,
     reduce(s = 0, x IN offers | s + CASE size(x.failed) WHEN 0 THEN x.n ELSE 0 END) AS passing
CALL (offers) {
  UNWIND [x IN offers WHERE size(x.failed) = 0] AS x` + firstProviders("$upto") + `
  WITH x, p ORDER BY size(x.via), p.key, x.capability
  RETURN collect(` + candidateRow + `) AS passingRows
}
CALL (offers) {
  UNWIND [x IN offers WHERE size(x.failed) > 0] AS x` + firstProviders("$keep") + `
  WITH x, p ORDER BY size(x.failed), size(x.via), p.key, x.capability
  RETURN collect(` + candidateRow + `) AS failingRows
}
WITH offers, considered, passing, passingRows[$skip..$upto] AS keptPassing, failingRows[..$keep] AS keptFailing
RETURN considered, passing, [x IN keptPassing + keptFailing | ` + keptRow + `] AS kept,
       considered - passing - size(keptFailing) AS omitted,
       [k IN ['lifecycle'] + [c IN $checks | c.key] | {key: k,
          count: reduce(s = 0, o IN offers | s + CASE WHEN k IN o.failed THEN o.n ELSE 0 END) - size([x IN keptFailing WHERE k IN x.failed])}] AS omittedBy`

// QueryCandidatesScan judges every provider on its own: the way for a name
// constraint. QueryCandidatesOf does the same for the offers of one
// provider ($provider, its ukey).
var (
	QueryCandidatesScan = scanCandidates(`MATCH (src)<-[:OF]-(pf:Profile)<-[p:PROVIDES]-(r:Resource)`)
	QueryCandidatesOf   = scanCandidates(`MATCH (r:Resource {ukey: $provider})-[p:PROVIDES]->(pf:Profile)-[:OF]->(src)`)
)

func scanCandidates(match string) string {
	return querySources + `
` + match + `
WITH r, p, {capability: src.key, via: via, failed: ` + failedChecks(true) + `} AS x
ORDER BY size(x.failed), size(x.via), p.key, x.capability
WITH collect(` + candidateRow + `) AS rows
WITH rows, [x IN rows WHERE size(x.failed) = 0] AS passingRows, [x IN rows WHERE size(x.failed) > 0] AS failingRows
WITH rows, size(passingRows) AS passing, passingRows[$skip..$upto] AS keptPassing, failingRows[..$keep] AS keptFailing, failingRows[$keep..] AS rest
RETURN size(rows) AS considered, passing, [x IN keptPassing + keptFailing | ` + keptRow + `] AS kept,
       size(rest) AS omitted,
       [k IN ['lifecycle'] + [c IN $checks | c.key] | {key: k, count: size([o IN rest WHERE k IN o.failed])}] AS omittedBy`
}

const qCapabilities = `
MATCH (c:Capability) WHERE c.org = $org AND c.json IS NOT NULL
RETURN c.json AS json ORDER BY c.key`

// FindCandidates asks QueryCandidates and explains what it returned.
func (s *Store) FindCandidates(ctx context.Context, org string, q capstan.CandidateQuery) (capstan.CandidateResult, error) {
	if err := capstan.CheckOrg(org); err != nil {
		return capstan.CandidateResult{}, err
	}
	maxRejected, maxPassing := q.MaxRejected, q.MaxPassing
	if maxRejected == 0 {
		maxRejected = capstan.DefaultMaxRejected
	}
	if maxPassing == 0 {
		maxPassing = capstan.DefaultMaxPassing
	}
	key := uid(org, q.Capability)
	res, err := s.readOne(ctx, "cypher.FindCandidates", func(tx runner) (any, error) {
		known, _ := s.definitions.Load(key)
		for attempt := 0; attempt < 3; attempt++ {
			if known == nil {
				def, err := fetchDefinition(ctx, tx, key)
				if err != nil {
					return nil, err
				}
				known, _ = s.definitions.LoadOrStore(key, def)
			}
			def := known.(*knownDefinition)
			query, params := candidateQuery(org, q, checkParams(def.def, q.Constraints), maxPassing, maxRejected)
			rec, err := single(ctx, tx, query, params)
			if err != nil {
				return nil, err
			}
			row := rec.AsMap()
			if str(row["def"]) == def.json {
				return found{def.def, row}, nil
			}
			s.definitions.CompareAndDelete(key, known) // redefined (or gone) since: judge again
			known = nil
		}
		return nil, capstan.Errorf(capstan.ECONFLICT, "capability %s keeps changing; try again", q.Capability)
	})
	if err != nil {
		return capstan.CandidateResult{}, err
	}
	f := res.(found)
	out := capstan.CandidateResult{Considered: int(i64(f.row["considered"])), Passing: int(i64(f.row["passing"])), Omitted: int(i64(f.row["omitted"]))}
	out.Candidates = candidates(f.row["kept"], org)
	slices.SortStableFunc(out.Candidates, func(a, b capstan.Candidate) int { // rank order, as every store
		if d := len(a.Via) - len(b.Via); d != 0 {
			return d
		}
		if c := cmp.Compare(a.Resource.Key(), b.Resource.Key()); c != 0 {
			return c
		}
		return cmp.Compare(a.Capability, b.Capability)
	})
	if out.Omitted > 0 {
		out.OmittedBy = map[string]int{}
		for _, x := range f.row["omittedBy"].([]any) {
			m := x.(map[string]any)
			if n := int(i64(m["count"])); n > 0 {
				out.OmittedBy[str(m["key"])] = n
			}
		}
	}
	for i := range out.Candidates {
		explain(&out.Candidates[i], f.def, q.Lifecycles, q.Constraints)
	}
	return out, nil
}

// knownDefinition is a capability definition the store has read, with the
// JSON it was read from. FindCandidates builds its checks from it without
// reading it first, and the query returns the definition's current JSON:
// when another writer redefined the capability in between, the answer is
// thrown away and the search runs again with the new definition.
type knownDefinition struct {
	json string
	def  *capstan.CapabilityDefinition
}

func fetchDefinition(ctx context.Context, tx runner, key string) (*knownDefinition, error) {
	recs, err := collect(ctx, tx, `MATCH (c:Capability {uid: $uid}) WHERE c.json IS NOT NULL RETURN c.json AS json`, map[string]any{"uid": key})
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, capstan.Errorf(capstan.ENOTFOUND, "capability %s is not defined", key[strings.IndexByte(key, '|')+1:])
	}
	k := &knownDefinition{json: str(recs[0].AsMap()["json"]), def: new(capstan.CapabilityDefinition)}
	if err := json.Unmarshal([]byte(k.json), k.def); err != nil {
		return nil, capstan.Wrap("cypher.FindCandidates", err)
	}
	return k, nil
}

// withDefinition runs a candidate query and returns, beside its answer, the
// wanted capability's definition as it is now ("" when there is none).
func withDefinition(query string) string {
	return `CALL () {` + query + `
}
OPTIONAL MATCH (w:Capability {uid: $want})
RETURN coalesce(w.json, '') AS def, considered, passing, kept, omitted, omittedBy`
}

// all stands for "no limit" in a query's $upto and $keep.
const all = 1<<31 - 1

// candidateQuery picks the statement for q (with the definition's check,
// see withDefinition) and its parameters.
func candidateQuery(org string, q capstan.CandidateQuery, checks []map[string]any, maxPassing, maxRejected int) (string, map[string]any) {
	skip := max(0, q.SkipPassing)
	params := map[string]any{"want": uid(org, q.Capability), "checks": checks, "skip": skip, "upto": all, "keep": all, "lifecycles": q.Lifecycles.Strings(),
		"owner": uid(org, q.Owner), "consumers": capstan.MaxConsumers + 1}
	if maxPassing >= 0 {
		params["upto"] = skip + maxPassing
	}
	if maxRejected >= 0 {
		params["keep"] = maxRejected
	}
	if q.Provider != "" {
		params["provider"] = uid(org, q.Provider)
		return searchOf, params
	}
	if _, named := q.Constraints["name"]; named {
		return searchScan, params
	}
	return search, params
}

// The candidate queries as FindCandidates runs them (withDefinition),
// built once.
var (
	search     = withDefinition(QueryCandidates)
	searchScan = withDefinition(QueryCandidatesScan)
	searchOf   = withDefinition(QueryCandidatesOf)
)

type found struct {
	def *capstan.CapabilityDefinition
	row map[string]any
}

// checkParams turns resolved constraints into the query's $checks, sorted
// by key like every store's checks.
func checkParams(def *capstan.CapabilityDefinition, want map[string]any) []map[string]any {
	keys := capstan.SortedKeys(want)
	out := make([]map[string]any, len(keys))
	for i, k := range keys {
		spec, _ := def.Spec(k)
		mode := "eq"
		switch {
		case isList(want[k]):
			mode = "in"
		case spec.Match == capstan.MatchMinimum:
			mode = "min"
		case spec.Match == capstan.MatchMaximum:
			mode = "max"
		}
		out[i] = map[string]any{"key": k, "want": want[k], "mode": mode, "s": "s:" + k, "a": "a:" + k}
	}
	return out
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}

// candidates turns the query's row maps into candidates whose Failed lists
// are the database's verdicts.
func candidates(v any, org string) []capstan.Candidate {
	rows, _ := v.([]any)
	out := make([]capstan.Candidate, 0, len(rows))
	for _, x := range rows {
		m := x.(map[string]any)
		var pc capstan.ProvidedCapability
		_ = json.Unmarshal([]byte(str(m["provided"])), &pc)
		r := &capstan.Resource{Meta: capstan.Meta{ID: str(m["id"]), OrganizationID: org}, Type: str(m["type"]), Name: str(m["name"]),
			Environment: str(m["environment"]), LifecycleStatus: capstan.LifecycleStatus(str(m["lifecycle"])),
			HealthStatus: capstan.HealthStatus(str(m["health"])), ProvidedCapabilities: []capstan.ProvidedCapability{pc}}
		consumers, more := capstan.CapConsumers(strs(m["consumers"]))
		out = append(out, capstan.Candidate{Resource: r, Capability: str(m["capability"]), Via: strs(m["via"]), Failed: strs(m["failed"]),
			Consumers: consumers, MoreConsumers: more})
	}
	return out
}

// explain fills a kept candidate's Checks. The verdicts are the database's
// (Failed); the wording is the one every store uses.
func explain(c *capstan.Candidate, def *capstan.CapabilityDefinition, accept capstan.Lifecycles, want map[string]any) {
	facts := c.Resource.Facts(&c.Resource.ProvidedCapabilities[0])
	c.Checks = capstan.CheckCandidate(&facts, accept, want, def.Spec)
	failed := map[string]bool{}
	for _, k := range c.Failed {
		failed[k] = true
	}
	for i := range c.Checks {
		c.Checks[i].Passed = !failed[c.Checks[i].Key]
	}
}

func strs(v any) []string {
	list, _ := v.([]any)
	if len(list) == 0 {
		return nil
	}
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = str(x)
	}
	return out
}

// QueryTopology walks runs_on from a resource, nearest first.
const QueryTopology = `
MATCH (start:Resource {uid: $uid})
MATCH path = (start)-[:RUNS_ON*0..10]->(r:Resource)
WHERE length(path) <= $depth
WITH r, path ORDER BY length(path), r.key
WITH r, head(collect([n IN nodes(path) | n.key])) AS keys
RETURN r.json AS json, keys ORDER BY size(keys), r.key`

// TopologyValue finds key on the resource or what it runs on.
func (s *Store) TopologyValue(ctx context.Context, org, resourceID, key string, maxDepth int) (capstan.TopologyHit, error) {
	res, err := s.readOne(ctx, "cypher.TopologyValue", func(tx runner) (any, error) {
		return collect(ctx, tx, QueryTopology, map[string]any{"uid": uid(org, resourceID), "depth": maxDepth})
	})
	if err != nil {
		return capstan.TopologyHit{}, err
	}
	recs := res.([]*neo4j.Record)
	if len(recs) == 0 {
		return capstan.TopologyHit{}, capstan.NotFound("resource", resourceID)
	}
	for _, rec := range recs {
		m := rec.AsMap()
		var r capstan.Resource
		if err := json.Unmarshal([]byte(str(m["json"])), &r); err != nil {
			return capstan.TopologyHit{}, capstan.Wrap("cypher.TopologyValue", err)
		}
		if v, ok := r.Value(key); ok {
			return capstan.TopologyHit{Found: true, Value: v, From: r.Key(), Path: strs(m["keys"])}, nil
		}
	}
	return capstan.TopologyHit{}, nil
}

// QueryDependencies is one hop of a dependency walk outward (what the
// resources of $uids depend on); QueryDependents one hop inward. The walk
// (Dependencies) goes one hop a round over what the last reached, so it
// reads each resource once however many ways lead to it: a pattern of
// 1..10 hops would list every walk to each, which grows exponentially on
// a densely linked catalog.
const (
	QueryDependencies = `
UNWIND $uids AS u
MATCH (a:Resource {uid: u})-[rel:RUNS_ON|DEPENDS_ON|USES|CONNECTS_TO|PART_OF]->(r:Resource)
RETURN r.uid AS uid, r.key AS key, r.json AS json, type(rel) AS rel, a.key AS other`
	QueryDependents = `
UNWIND $uids AS u
MATCH (a:Resource {uid: u})<-[rel:RUNS_ON|DEPENDS_ON|USES|CONNECTS_TO|PART_OF]-(r:Resource)
RETURN r.uid AS uid, r.key AS key, r.json AS json, type(rel) AS rel, a.key AS other`
)

// DependencyWalkTimeout bounds a dependency walk on the server.
const DependencyWalkTimeout = 10 * time.Second

var relTypes = map[string]capstan.RelationshipType{
	"RUNS_ON": capstan.RelRunsOn, "DEPENDS_ON": capstan.RelDependsOn, "USES": capstan.RelUses,
	"CONNECTS_TO": capstan.RelConnectsTo, "PART_OF": capstan.RelPartOf,
}

// Dependencies walks relationships from a resource up to depth hops,
// one hop a round (QueryDependencies): each resource once, at its least
// depth, with the edge from the least key that reached it.
func (s *Store) Dependencies(ctx context.Context, org, resourceID string, dir capstan.Direction, depth, limit int) ([]capstan.Dependency, error) {
	q := QueryDependencies
	if dir == capstan.Incoming {
		q = QueryDependents
	}
	res, err := s.readBounded(ctx, "cypher.Dependencies", DependencyWalkTimeout, func(tx neo4j.ManagedTransaction) (any, error) {
		found, err := exists(ctx, tx, `MATCH (r:Resource {uid: $uid}) RETURN r.id`, map[string]any{"uid": uid(org, resourceID)})
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, capstan.NotFound("resource", resourceID)
		}
		return walkDependencies(ctx, tx, q, uid(org, resourceID), depth, limit)
	})
	if err != nil {
		return nil, err
	}
	return res.([]capstan.Dependency), nil
}

// walkDependencies runs q one hop a round from start, reading at most
// limit resources. A round reads at most twice the rows the limit leaves
// (a resource reached by several edges is a row per edge): a round that
// fills them is refused, as nothing says the rest would fit.
func walkDependencies(ctx context.Context, tx neo4j.ManagedTransaction, q, start string, depth, limit int) ([]capstan.Dependency, error) {
	var out []capstan.Dependency
	seen := map[string]bool{start: true}
	frontier := []string{start}
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		rowCap := 2 * (limit - len(out) + 1)
		recs, err := collect(ctx, tx, q+"\nLIMIT $cap", map[string]any{"uids": frontier, "cap": rowCap})
		if err != nil {
			return nil, err
		}
		if len(recs) == rowCap {
			return nil, capstan.WalkTooLarge(limit, depth)
		}
		rows := make([]map[string]any, 0, len(recs))
		for _, rec := range recs {
			rows = append(rows, rec.AsMap())
		}
		slices.SortFunc(rows, func(a, b map[string]any) int {
			return cmp.Or(cmp.Compare(str(a["key"]), str(b["key"])), cmp.Compare(str(a["other"]), str(b["other"])))
		})
		frontier = frontier[:0:0]
		for _, m := range rows {
			id := str(m["uid"])
			if seen[id] {
				continue
			}
			seen[id] = true
			if len(out) == limit {
				return nil, capstan.WalkTooLarge(limit, depth)
			}
			var r capstan.Resource
			if err := json.Unmarshal([]byte(str(m["json"])), &r); err != nil {
				return nil, capstan.Wrap("cypher.Dependencies", err)
			}
			out = append(out, capstan.Dependency{Resource: &r, Relationship: relTypes[str(m["rel"])], From: str(m["other"]), Depth: d})
			frontier = append(frontier, id)
		}
	}
	return out, nil
}
