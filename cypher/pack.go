package cypher

import (
	"context"
	"encoding/json"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

const qPackDigest = `MATCH (p:ScenarioPack {uid: $uid}) RETURN p.digest AS digest`

const (
	qOwnedCapabilities = `
UNWIND $uids AS u
MATCH (n:Capability {uid: u}) WHERE n.json IS NOT NULL
RETURN u AS uid, n.pack AS pack, n.json AS json`
	qOwnedResourceTypes = `
UNWIND $uids AS u
MATCH (n:ResourceType {uid: u})
RETURN u AS uid, n.pack AS pack, n.json AS json`
)

const qWriteCapability = `
MERGE (c:Capability {uid: $uid})
SET c.org = $org, c.key = $key, c.pack = $pack, c.json = $json
WITH c
OPTIONAL MATCH (c)-[old:IMPLIES]->()
DELETE old
WITH DISTINCT c
UNWIND $implies AS target
MERGE (t:Capability {uid: target.uid})
ON CREATE SET t.org = $org, t.key = target.key
MERGE (c)-[:IMPLIES]->(t)`

const qWriteResourceType = `
MERGE (t:ResourceType {uid: $uid})
SET t.org = $org, t.key = $key, t.pack = $pack, t.json = $json`

const qWritePack = `
CREATE (p:ScenarioPack {uid: $uid, org: $org, id: $id, version: $version, ref: $ref, digest: $digest, json: $json})`

const qWriteScenario = `
MATCH (p:ScenarioPack {uid: $pack})
CREATE (s:Scenario {uid: $uid, org: $org, id: $id, version: $version, ref: $ref, json: $json})-[:IN_PACK]->(p)
WITH s
UNWIND $provides AS cap
MERGE (c:Capability {uid: cap.uid})
ON CREATE SET c.org = $org, c.key = cap.key
CREATE (s)-[:PROVIDES_CAPABILITY]->(c)`

const qScenarioRequires = `
MATCH (s:Scenario {uid: $uid})
UNWIND $requires AS req
MERGE (c:Capability {uid: req.uid})
ON CREATE SET c.org = $org, c.key = req.key
CREATE (s)-[:REQUIRES {id: req.id}]->(c)`

const qWritePolicy = `
MERGE (p:Policy {uid: $uid})
SET p.org = $org, p.pack = $pack, p.json = $json`

// InstallPack stores a pack and what it brings in one transaction.
func (s *Store) InstallPack(ctx context.Context, org string, p *capstan.ScenarioPack) (bool, error) {
	if err := capstan.CheckOrg(org); err != nil {
		return false, err
	}
	if p.Digest == "" {
		return false, capstan.Errorf(capstan.EINVALID, "pack %s has no digest", p.Ref())
	}
	install := func(tx neo4j.ManagedTransaction) (any, error) {
		recs, err := collect(ctx, tx, qPackDigest, map[string]any{"uid": uid(org, p.Ref())})
		if err != nil {
			return nil, err
		}
		if len(recs) > 0 {
			if d, _ := recs[0].Get("digest"); str(d) != p.Digest {
				return nil, capstan.Errorf(capstan.ECONFLICT, "pack %s is already installed with different content; publish a new version", p.Ref())
			}
			return false, nil
		}
		return true, s.writePack(ctx, tx, org, p)
	}
	res, err := s.write(ctx, "cypher.InstallPack", install)
	if capstan.ErrorCode(err) == capstan.ECONFLICT {
		// Two processes installing the same pack at once (replicas that
		// start together): the second's write meets the first's pack at a
		// unique constraint. Read again, it finds the pack installed, or
		// installed with other content.
		res, err = s.write(ctx, "cypher.InstallPack", install)
	}
	if err != nil {
		return false, err
	}
	return res.(bool), nil
}

// owned returns the pack and JSON of the entities with the given uids.
func owned(ctx context.Context, tx neo4j.ManagedTransaction, q string, uids []string) (map[string][2]string, error) {
	recs, err := collect(ctx, tx, q, map[string]any{"uids": uids})
	if err != nil {
		return nil, err
	}
	out := map[string][2]string{}
	for _, rec := range recs {
		m := rec.AsMap()
		out[str(m["uid"])] = [2]string{str(m["pack"]), str(m["json"])}
	}
	return out, nil
}

// mayReplace reports whether pack p may overwrite what the pack ref have
// brought: only a newer version of the same pack may.
func mayReplace(have string, p *capstan.ScenarioPack) bool {
	id, version := capstan.SplitRef(have)
	return id == p.ID && capstan.CompareSemver(p.Version, version) > 0
}

// writePack writes pack p: the capabilities and resource types it may
// (re)define, the pack, its scenarios with their edges, its policies.
func (s *Store) writePack(ctx context.Context, tx neo4j.ManagedTransaction, org string, p *capstan.ScenarioPack) error {
	have, err := ownedDefinitions(ctx, tx, org, p)
	if err != nil {
		return err
	}
	if err := writeCapabilities(ctx, tx, org, p, have); err != nil {
		return err
	}
	if err := writeResourceTypes(ctx, tx, org, p, have); err != nil {
		return err
	}
	stored := *p
	stored.OrganizationID = org
	stored.InstalledAt = s.now().UTC()
	data, _ := json.Marshal(stored)
	ref := p.Ref()
	if _, err := tx.Run(ctx, qWritePack, map[string]any{"uid": uid(org, ref), "org": org, "id": p.ID, "version": p.Version, "ref": ref, "digest": p.Digest, "json": string(data)}); err != nil {
		return err
	}
	if err := writeScenarios(ctx, tx, org, p); err != nil {
		return err
	}
	for _, pol := range p.Policies {
		pol.Pack = ref
		data, _ := json.Marshal(pol)
		if _, err := tx.Run(ctx, qWritePolicy, map[string]any{"uid": uid(org, "policy", p.ID, pol.ID), "org": org, "pack": ref, "json": string(data)}); err != nil {
			return err
		}
	}
	return nil
}

// ownedDefinitions reads which pack brought each capability and resource
// type p defines, where one already did: uid -> (pack ref, json).
func ownedDefinitions(ctx context.Context, tx neo4j.ManagedTransaction, org string, p *capstan.ScenarioPack) (map[string][2]string, error) {
	var capUIDs, typeUIDs []string
	for _, c := range p.Capabilities {
		capUIDs = append(capUIDs, uid(org, c.Key))
	}
	for _, t := range p.ResourceTypes {
		typeUIDs = append(typeUIDs, uid(org, "type", t.Key))
	}
	have, err := owned(ctx, tx, qOwnedCapabilities, capUIDs)
	if err != nil {
		return nil, err
	}
	types, err := owned(ctx, tx, qOwnedResourceTypes, typeUIDs)
	if err != nil {
		return nil, err
	}
	for k, v := range types {
		have[k] = v
	}
	return have, nil
}

// writeCapabilities writes p's capability definitions, except those
// another pack brought that p may not replace: those must be the same
// definition (ECONFLICT otherwise) and stay as they are.
func writeCapabilities(ctx context.Context, tx neo4j.ManagedTransaction, org string, p *capstan.ScenarioPack, have map[string][2]string) error {
	ref := p.Ref()
	for _, c := range p.Capabilities {
		old, ok := have[uid(org, c.Key)]
		if ok && !mayReplace(old[0], p) {
			var prev capstan.CapabilityDefinition
			_ = json.Unmarshal([]byte(old[1]), &prev)
			prev.Pack, c.Pack = "", ""
			a, _ := json.Marshal(prev)
			b, _ := json.Marshal(c)
			if string(a) != string(b) {
				return capstan.Errorf(capstan.ECONFLICT, "capability %s is already defined differently by pack %s", c.Key, old[0])
			}
			continue
		}
		c.Pack = ref
		data, _ := json.Marshal(c)
		implies := make([]map[string]any, len(c.Implies))
		for i, k := range c.Implies {
			implies[i] = map[string]any{"uid": uid(org, k), "key": k}
		}
		if _, err := tx.Run(ctx, qWriteCapability, map[string]any{"uid": uid(org, c.Key), "org": org, "key": c.Key, "pack": ref, "json": string(data), "implies": implies}); err != nil {
			return err
		}
	}
	return nil
}

// writeResourceTypes writes p's resource types, except those another pack
// brought that p may not replace.
func writeResourceTypes(ctx context.Context, tx neo4j.ManagedTransaction, org string, p *capstan.ScenarioPack, have map[string][2]string) error {
	ref := p.Ref()
	for _, t := range p.ResourceTypes {
		if old, ok := have[uid(org, "type", t.Key)]; ok && !mayReplace(old[0], p) {
			continue
		}
		t.Pack = ref
		data, _ := json.Marshal(t)
		if _, err := tx.Run(ctx, qWriteResourceType, map[string]any{"uid": uid(org, "type", t.Key), "org": org, "key": t.Key, "pack": ref, "json": string(data)}); err != nil {
			return err
		}
	}
	return nil
}

// writeScenarios writes p's scenarios with the capabilities each provides
// and requires.
func writeScenarios(ctx context.Context, tx neo4j.ManagedTransaction, org string, p *capstan.ScenarioPack) error {
	ref := p.Ref()
	for _, sc := range p.Scenarios {
		sc.Pack = ref
		data, _ := json.Marshal(sc)
		provides := make([]map[string]any, len(sc.Provides))
		for i, pc := range sc.Provides {
			provides[i] = map[string]any{"uid": uid(org, pc.Capability), "key": pc.Capability}
		}
		params := map[string]any{"uid": uid(org, "scenario", sc.Ref()), "pack": uid(org, ref), "org": org, "id": sc.ID, "version": sc.Version, "ref": sc.Ref(), "json": string(data), "provides": provides}
		if _, err := tx.Run(ctx, qWriteScenario, params); err != nil {
			return err
		}
		requires := make([]map[string]any, len(sc.Requires))
		for i, r := range sc.Requires {
			requires[i] = map[string]any{"uid": uid(org, r.Capability), "key": r.Capability, "id": r.ID}
		}
		if _, err := tx.Run(ctx, qScenarioRequires, map[string]any{"uid": uid(org, "scenario", sc.Ref()), "org": org, "requires": requires}); err != nil {
			return err
		}
	}
	return nil
}

func listAll[T any](s *Store, ctx context.Context, op, q string, org string) ([]*T, error) {
	res, err := s.readOne(ctx, op, func(tx runner) (any, error) {
		return queryJSON[T](ctx, tx, q, map[string]any{"org": org})
	})
	if err != nil {
		return nil, err
	}
	return res.([]*T), nil
}

// ListPacks returns installed packs ordered by id then version.
func (s *Store) ListPacks(ctx context.Context, org string) ([]*capstan.ScenarioPack, error) {
	packs, err := listAll[capstan.ScenarioPack](s, ctx, "cypher.ListPacks", `MATCH (p:ScenarioPack) WHERE p.org = $org RETURN p.json AS json`, org)
	capstan.SortPacks(packs)
	return packs, err
}

// ListResourceTypes returns resource types ordered by key.
func (s *Store) ListResourceTypes(ctx context.Context, org string) ([]*capstan.ResourceType, error) {
	return listAll[capstan.ResourceType](s, ctx, "cypher.ListResourceTypes", `MATCH (t:ResourceType) WHERE t.org = $org RETURN t.json AS json ORDER BY t.key`, org)
}

// ListCapabilities returns capability definitions ordered by key.
func (s *Store) ListCapabilities(ctx context.Context, org string) ([]*capstan.CapabilityDefinition, error) {
	return listAll[capstan.CapabilityDefinition](s, ctx, "cypher.ListCapabilities", qCapabilities, org)
}

// ListPolicies returns every policy of every installed pack.
func (s *Store) ListPolicies(ctx context.Context, org string) ([]*capstan.Policy, error) {
	return listAll[capstan.Policy](s, ctx, "cypher.ListPolicies", `MATCH (p:Policy) WHERE p.org = $org RETURN p.json AS json ORDER BY p.uid`, org)
}

// GetCapability returns a capability definition by key.
func (s *Store) GetCapability(ctx context.Context, org, key string) (*capstan.CapabilityDefinition, error) {
	res, err := s.readOne(ctx, "cypher.GetCapability", func(tx runner) (any, error) {
		return queryJSON[capstan.CapabilityDefinition](ctx, tx, `MATCH (c:Capability {uid: $uid}) RETURN c.json AS json`, map[string]any{"uid": uid(org, key)})
	})
	if err != nil {
		return nil, err
	}
	defs := res.([]*capstan.CapabilityDefinition)
	if len(defs) == 0 {
		return nil, capstan.NotFound("capability", key)
	}
	return defs[0], nil
}

// QueryScenariosProviding answers "which scenarios can create a provider of
// capability C".
const QueryScenariosProviding = `
MATCH (s:Scenario)-[:PROVIDES_CAPABILITY]->(c:Capability {uid: $cap})
RETURN s.json AS json`

// ListScenarios returns scenarios ordered by id then version.
func (s *Store) ListScenarios(ctx context.Context, org string, f capstan.ScenarioFilter) ([]*capstan.Scenario, error) {
	q, params := `MATCH (s:Scenario) WHERE s.org = $org RETURN s.json AS json`, map[string]any{"org": org}
	if f.Provides != "" {
		q, params = QueryScenariosProviding, map[string]any{"cap": uid(org, f.Provides)}
	} else if f.ID != "" {
		q, params = `MATCH (s:Scenario) WHERE s.org = $org AND s.id = $id RETURN s.json AS json`, map[string]any{"org": org, "id": f.ID}
	}
	res, err := s.readOne(ctx, "cypher.ListScenarios", func(tx runner) (any, error) {
		return queryJSON[capstan.Scenario](ctx, tx, q, params)
	})
	if err != nil {
		return nil, err
	}
	return capstan.SelectScenarios(res.([]*capstan.Scenario), f), nil
}

// GetScenario returns a scenario by id@version, or its newest version.
func (s *Store) GetScenario(ctx context.Context, org, ref string) (*capstan.Scenario, error) {
	if _, version := capstan.SplitRef(ref); version == "" {
		return capstan.NewestScenario(ctx, s, org, ref)
	}
	res, err := s.readOne(ctx, "cypher.GetScenario", func(tx runner) (any, error) {
		return queryJSON[capstan.Scenario](ctx, tx, `MATCH (s:Scenario {uid: $uid}) RETURN s.json AS json`, map[string]any{"uid": uid(org, "scenario", ref)})
	})
	if err != nil {
		return nil, err
	}
	scs := res.([]*capstan.Scenario)
	if len(scs) == 0 {
		return nil, capstan.NotFound("scenario", ref)
	}
	return scs[0], nil
}

// ListPackRefs names the installed packs without reading their content.
func (s *Store) ListPackRefs(ctx context.Context, org string) ([]string, error) {
	res, err := s.readOne(ctx, "cypher.ListPackRefs", func(tx runner) (any, error) {
		recs, err := collect(ctx, tx, `MATCH (p:ScenarioPack) WHERE p.org = $org RETURN p.ref AS ref ORDER BY ref`, map[string]any{"org": org})
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(recs))
		for _, r := range recs {
			out = append(out, str(r.AsMap()["ref"]))
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return res.([]string), nil
}
