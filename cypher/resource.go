package cypher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

// Resource writes. A resource is a :Resource node holding its JSON and the
// properties queries filter on; each provided capability is a PROVIDES
// relationship (with the provided capability's JSON, the resource's key and
// its profile's uid) to the :Profile of what it offers, which is OF the
// :Capability node; each relationship is a typed edge to its target.
//
// A profile holds every fact a constraint check reads from one provider
// except its name: the scope (s:KEY) and attributes (a:KEY) of the provided
// capability and the resource's environment and lifecycle. Providers that
// offer the same facts share one profile, so a candidate search checks each
// distinct offer once and counts providers by the profile's degree (see
// QueryCandidates). Profiles are never deleted: one no provider links to
// any more is skipped by its zero degree and reused when a provider offers
// its facts again.

// qCreateResources and qUpdateResources write resources known to be new
// and known to exist (a CREATE is much cheaper than a MERGE), each with
// its PROVIDES edges to profiles that exist already (qCreateProfiles).
const (
	qCreateResources = `
UNWIND $rows AS row
CREATE (r:Resource {ukey: row.ukey})
SET r += row.props` + qProvides
	qUpdateResources = `
UNWIND $rows AS row
MATCH (r:Resource {ukey: row.ukey})
USING INDEX SEEK r:Resource(ukey)
SET r += row.props` + qProvides
	qProvides = `
WITH r, row
UNWIND row.provides AS p
MATCH (pf:Profile {uid: p.profile})
USING INDEX SEEK pf:Profile(uid)
CREATE (r)-[e:PROVIDES]->(pf)
SET e = p.props`
)

// The queries that find resources or profiles by key hold the planner to
// the unique index: right after a large import its statistics can lag,
// and a re-import planned then scanned the index for every row instead
// of seeking (measured: 60 s instead of 0.3 s to drop 18,000 edges).
const qDropResourceEdges = `
UNWIND $ukeys AS k
MATCH (r:Resource {ukey: k})
USING INDEX SEEK r:Resource(ukey)
MATCH (r)-[e:PROVIDES|RUNS_ON|DEPENDS_ON|USES|CONNECTS_TO|PART_OF]->()
DELETE e`

const qMissingTargets = `
UNWIND $targets AS t
OPTIONAL MATCH (r:Resource {ukey: t})
USING INDEX SEEK r:Resource(ukey)
WITH t, r WHERE r IS NULL
RETURN collect(t) AS missing`

// qCreateProfiles makes sure every profile a write links to exists, with
// its OF edge to the capability (created, without a definition, when no
// pack defines it yet).
const qCreateProfiles = `
UNWIND $profiles AS x
MERGE (pf:Profile {uid: x.uid})
ON CREATE SET pf += x.props
WITH pf, x WHERE NOT EXISTS { (pf)-[:OF]->(:Capability) }
MERGE (c:Capability {uid: x.cap_uid})
ON CREATE SET c.org = x.org, c.key = x.capability
CREATE (pf)-[:OF]->(c)`

// qCreateRelationship holds one query per relationship type: Cypher cannot
// take a relationship type as a parameter, so the types are fixed here.
var qCreateRelationship = map[capstan.RelationshipType]string{
	capstan.RelRunsOn:     relQuery("RUNS_ON"),
	capstan.RelDependsOn:  relQuery("DEPENDS_ON"),
	capstan.RelUses:       relQuery("USES"),
	capstan.RelConnectsTo: relQuery("CONNECTS_TO"),
	capstan.RelPartOf:     relQuery("PART_OF"),
}

func relQuery(typ string) string {
	return `
UNWIND $rows AS x
MATCH (a:Resource {ukey: x.from})
USING INDEX SEEK a:Resource(ukey)
CALL (a, x) {
  MATCH (b:Resource {ukey: x.to})
  USING INDEX SEEK b:Resource(ukey)
  CREATE (a)-[:` + typ + `]->(b)
}`
}

// writeResources writes rs (validated, Meta set) as nodes with their
// edges; existing lists the keys of those that were stored before, whose
// old edges go. Relationship targets must exist after the write.
func writeResources(ctx context.Context, tx neo4j.ManagedTransaction, org string, rs []*capstan.Resource, existing []string) error {
	edges, err := writeResourceNodes(ctx, tx, org, rs, existing)
	if err != nil {
		return err
	}
	return edges.link(ctx, tx, org)
}

// resourceEdges are the relationships of written resources, by type,
// and the keys of their targets.
type resourceEdges struct {
	rels    map[capstan.RelationshipType][]map[string]any
	targets []string
}

// writeResourceNodes writes rs as nodes with their PROVIDES edges and
// returns their relationships, for link.
func writeResourceNodes(ctx context.Context, tx neo4j.ManagedTransaction, org string, rs []*capstan.Resource, existing []string) (resourceEdges, error) {
	old := make(map[string]bool, len(existing))
	for _, k := range existing {
		old[k] = true
	}
	var created, updated []map[string]any
	profiles := map[string]map[string]any{}
	rels := map[capstan.RelationshipType][]map[string]any{}
	var targets []string
	for _, r := range rs {
		data, err := json.Marshal(r)
		if err != nil {
			return resourceEdges{}, err
		}
		ukey := uid(org, r.Key())
		row := resourceRow(org, r, ukey, data, profiles)
		if old[ukey] {
			updated = append(updated, row)
		} else {
			created = append(created, row)
		}
		for _, rel := range r.Relationships {
			rels[rel.Type] = append(rels[rel.Type], map[string]any{"from": ukey, "to": uid(org, rel.Target)})
			targets = append(targets, uid(org, rel.Target))
		}
	}
	if len(existing) > 0 {
		if _, err := tx.Run(ctx, qDropResourceEdges, map[string]any{"ukeys": existing}); err != nil {
			return resourceEdges{}, err
		}
	}
	if len(profiles) > 0 {
		rows := make([]map[string]any, 0, len(profiles))
		for _, pf := range profiles {
			rows = append(rows, pf)
		}
		if _, err := tx.Run(ctx, qCreateProfiles, map[string]any{"profiles": rows}); err != nil {
			return resourceEdges{}, err
		}
	}
	for q, rows := range map[string][]map[string]any{qUpdateResources: updated, qCreateResources: created} {
		if len(rows) == 0 {
			continue
		}
		if _, err := tx.Run(ctx, q, map[string]any{"rows": rows}); err != nil {
			return resourceEdges{}, err
		}
	}
	return resourceEdges{rels: rels, targets: targets}, nil
}

// link creates the relationships once every target is written; a
// missing target is EINVALID.
func (e resourceEdges) link(ctx context.Context, tx neo4j.ManagedTransaction, org string) error {
	targets, rels := e.targets, e.rels
	if len(targets) > 0 {
		rec, err := single(ctx, tx, qMissingTargets, map[string]any{"targets": targets})
		if err != nil {
			return err
		}
		if missing, _ := rec.Get("missing"); len(missing.([]any)) > 0 {
			var p capstan.Problems
			for _, m := range missing.([]any) {
				p.Addf("relationship target %s does not exist", str(m)[len(org)+1:])
			}
			return p.Err("resources")
		}
	}
	for typ, rows := range rels {
		if _, err := tx.Run(ctx, qCreateRelationship[typ], map[string]any{"rows": rows}); err != nil {
			return err
		}
	}
	return nil
}

// resourceRow is the $rows entry of r for qCreateResources or
// qUpdateResources; it adds the profiles r offers to profiles.
func resourceRow(org string, r *capstan.Resource, ukey string, data []byte, profiles map[string]map[string]any) map[string]any {
	provides := make([]map[string]any, 0, len(r.ProvidedCapabilities))
	for i := range r.ProvidedCapabilities {
		pc := &r.ProvidedCapabilities[i]
		pj, _ := json.Marshal(pc)
		pf := profileOf(org, r, pc)
		profiles[str(pf["uid"])] = pf
		provides = append(provides, map[string]any{"profile": pf["uid"],
			"props": map[string]any{"key": r.Key(), "profile": pf["uid"], "json": string(pj)}})
	}
	return map[string]any{"ukey": ukey, "provides": provides, "props": map[string]any{
		"uid": uid(org, r.ID), "id": r.ID, "org": org, "key": r.Key(), "type": r.Type, "name": r.Name,
		"environment": r.Environment, "lifecycle": string(r.LifecycleStatus), "health": string(r.HealthStatus),
		"version": r.Version, "created": r.CreatedAt.Format(timeFormat), "json": string(data)}}
}

// profileOf returns the $profiles row of what r offers as pc: the facts,
// and a uid that is the same for every provider offering the same facts.
func profileOf(org string, r *capstan.Resource, pc *capstan.ProvidedCapability) map[string]any {
	facts := map[string]any{"environment": r.Environment, "lifecycle": string(r.LifecycleStatus)}
	flatten(facts, "s:", pc.Scope)
	flatten(facts, "a:", pc.Attributes)
	canonical, _ := json.Marshal(facts) // map keys sorted: equal facts, equal bytes
	sum := sha256.Sum256(canonical)
	id := uid(org, pc.Capability) + "|" + hex.EncodeToString(sum[:12])
	props := map[string]any{"uid": id, "org": org, "capability": pc.Capability}
	maps.Copy(props, facts)
	return map[string]any{"uid": id, "org": org, "capability": pc.Capability, "cap_uid": uid(org, pc.Capability), "props": props}
}

// flatten copies primitive values (and lists of them) into props with a prefix.
func flatten(props map[string]any, prefix string, m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case string, bool, int, int64, float64:
			props[prefix+k] = x
		case []any:
			ok := true
			for _, e := range x {
				switch e.(type) {
				case string, bool, int, int64, float64:
				default:
					ok = false
				}
			}
			if ok {
				props[prefix+k] = x
			}
		}
	}
}

// upsert writes resources by key: an existing resource keeps its id,
// creation time and operation pointers and gets the next version; a new
// one gets a new id. It sets each resource's Meta to what was stored.
func (s *Store) upsert(ctx context.Context, tx neo4j.ManagedTransaction, org string, rs []*capstan.Resource) (capstan.ImportResult, error) {
	var out capstan.ImportResult
	old, err := storedResources(ctx, tx, org, rs)
	if err != nil {
		return out, err
	}
	var existing []string
	for _, r := range rs {
		if prev := old[r.Key()]; prev != nil {
			r.Meta = prev.Meta
			r.ActiveOperationID, r.LastOperationID = prev.ActiveOperationID, prev.LastOperationID
			s.touch(&r.Meta, org, false)
			existing = append(existing, uid(org, r.Key()))
			out.Updated++
		} else {
			s.touch(&r.Meta, org, true)
			out.Created++
		}
	}
	return out, writeResources(ctx, tx, org, rs, existing)
}

// ImportResources upserts resources by key in one transaction.
func (s *Store) ImportResources(ctx context.Context, org string, rs []*capstan.Resource) (capstan.ImportResult, error) {
	if err := capstan.CheckImport(org, rs); err != nil {
		return capstan.ImportResult{}, err
	}
	// Work on copies: a retried transaction must start from the input.
	res, err := s.write(ctx, "cypher.ImportResources", func(tx neo4j.ManagedTransaction) (any, error) {
		copies := make([]*capstan.Resource, len(rs))
		for i, r := range rs {
			c := *r
			c.Meta = capstan.Meta{}
			copies[i] = &c
		}
		ir, err := s.upsert(ctx, tx, org, copies)
		if err != nil {
			return nil, err
		}
		return importOutcome{ir, copies}, nil
	})
	if err != nil {
		return capstan.ImportResult{}, err
	}
	o := res.(importOutcome)
	for i := range rs {
		rs[i].ActiveOperationID, rs[i].LastOperationID = o.stored[i].ActiveOperationID, o.stored[i].LastOperationID
		rs[i].Meta = o.stored[i].Meta
	}
	return o.result, nil
}

type importOutcome struct {
	result capstan.ImportResult
	stored []*capstan.Resource
}

const qResourcesByUkey = `
UNWIND $ukeys AS k
MATCH (r:Resource {ukey: k})
USING INDEX SEEK r:Resource(ukey)
RETURN r.json AS json`

// storedResources returns the stored versions of rs that exist, by key.
func storedResources(ctx context.Context, tx neo4j.ManagedTransaction, org string, rs []*capstan.Resource) (map[string]*capstan.Resource, error) {
	ukeys := make([]string, len(rs))
	for i, r := range rs {
		ukeys[i] = uid(org, r.Key())
	}
	list, err := queryJSON[capstan.Resource](ctx, tx, qResourcesByUkey, map[string]any{"ukeys": ukeys})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*capstan.Resource, len(list))
	for _, r := range list {
		out[r.Key()] = r
	}
	return out, nil
}

const timeFormat = time.RFC3339Nano

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeFormat, s)
	return t
}
