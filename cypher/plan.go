package cypher

import (
	"context"
	"encoding/json"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

// A plan is a :Plan node holding its JSON (plans are immutable snapshots
// per revision, read whole), linked FOR its :Intent, with its bindings as
// :Binding nodes: each REQUIRES its :Capability and is BOUND_TO its
// provider :Resource or CREATED_BY the :Scenario of its sub-operation.

const qCreatePlan = `
MATCH (i:Intent {uid: $intent})
CREATE (p:Plan {uid: $uid, org: $org, id: $id, intent_id: $intent_id, status: $status, version: $version, json: $json})-[:FOR]->(i)`

const qUpdatePlan = `
MATCH (p:Plan {uid: $uid})
SET p.status = $status, p.version = $version, p.json = $json`

const qPlanVersion = `MATCH (p:Plan {uid: $uid}) SET p.locked = true REMOVE p.locked RETURN p.version AS version, p.json AS json`

const qDropBindings = `
MATCH (p:Plan {uid: $uid})-[:HAS_BINDING]->(b:Binding)
DETACH DELETE b`

const qWriteBindings = `
MATCH (p:Plan {uid: $uid})
UNWIND $bindings AS x
CREATE (p)-[:HAS_BINDING]->(b:Binding {uid: x.uid, org: $org, key: x.key, status: x.status, reason: x.reason, explicit: x.explicit})
MERGE (c:Capability {uid: x.capability_uid})
ON CREATE SET c.org = $org, c.key = x.capability
CREATE (b)-[:REQUIRES]->(c)
WITH b, x
OPTIONAL MATCH (r:Resource {uid: x.provider_uid})
OPTIONAL MATCH (s:Scenario {uid: x.scenario_uid})
FOREACH (_ IN CASE WHEN r IS NULL THEN [] ELSE [1] END | CREATE (b)-[:BOUND_TO]->(r))
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | CREATE (b)-[:CREATED_BY]->(s))`

func bindingRows(org string, p *capstan.Plan) []map[string]any {
	rows := make([]map[string]any, len(p.Bindings))
	for i, b := range p.Bindings {
		row := map[string]any{"uid": uid(org, "binding", p.ID, b.ID), "key": b.ID, "status": string(b.Status), "reason": b.Reason,
			"explicit": b.Explicit, "capability": b.Requirement.Capability, "capability_uid": uid(org, b.Requirement.Capability),
			"provider_uid": "", "scenario_uid": ""}
		if b.Provider != nil {
			row["provider_uid"] = uid(org, b.Provider.ResourceID)
		}
		if b.SubOperation != nil {
			row["scenario_uid"] = uid(org, "scenario", b.SubOperation.Scenario)
		}
		rows[i] = row
	}
	return rows
}

func (s *Store) writeBindings(ctx context.Context, tx neo4j.ManagedTransaction, org string, p *capstan.Plan) error {
	if _, err := tx.Run(ctx, qDropBindings, map[string]any{"uid": uid(org, p.ID)}); err != nil {
		return err
	}
	_, err := tx.Run(ctx, qWriteBindings, map[string]any{"uid": uid(org, p.ID), "org": org, "bindings": bindingRows(org, p)})
	return err
}

// CreatePlan stores a new plan with its bindings and the updated intent in
// one transaction.
func (s *Store) CreatePlan(ctx context.Context, org string, p *capstan.Plan, i *capstan.Intent, replaced *capstan.Plan) error {
	if err := capstan.CheckCreatePlan(org, p, i, replaced); err != nil {
		return err
	}
	c := *p
	c.IntentID = i.ID
	s.touch(&c.Meta, org, true)
	snap, snapData, err := capstan.RevisionWrite(nil, &c, nil)
	if err != nil {
		return err
	}
	c.Digest = snap.Digest
	data, err := json.Marshal(&c)
	if err != nil {
		return capstan.Wrap("cypher.CreatePlan", err)
	}
	i2 := *i
	i2.LatestPlanID = c.ID
	var rm capstan.Meta
	res, err := s.write(ctx, "cypher.CreatePlan", func(tx neo4j.ManagedTransaction) (any, error) {
		if replaced != nil {
			m, err := s.putPlan(ctx, tx, org, replaced)
			if err != nil {
				return nil, err
			}
			rm = m
		}
		meta, err := s.putIntent(ctx, tx, org, &i2)
		if err != nil {
			return nil, err
		}
		if _, err := tx.Run(ctx, qCreatePlan, map[string]any{"intent": uid(org, i.ID), "uid": uid(org, c.ID), "org": org, "id": c.ID,
			"intent_id": i.ID, "status": string(c.Status), "version": c.Version, "json": string(data)}); err != nil {
			return nil, err
		}
		if _, err := tx.Run(ctx, qCreateRevision, map[string]any{"plan": uid(org, c.ID), "uid": revisionUID(org, c.ID, c.Revision), "org": org,
			"plan_id": c.ID, "revision": c.Revision, "digest": snap.Digest, "json": string(snapData)}); err != nil {
			return nil, err
		}
		return meta, s.writeBindings(ctx, tx, org, &c)
	})
	if err != nil {
		return err
	}
	p.Meta, p.IntentID, p.Digest = c.Meta, c.IntentID, c.Digest
	if replaced != nil {
		replaced.Meta = rm
	}
	i2.Meta = res.(capstan.Meta)
	*i = i2
	return nil
}

// UpdatePlan writes p (and i, when given) when their versions are current.
func (s *Store) UpdatePlan(ctx context.Context, org string, p *capstan.Plan, i *capstan.Intent) error {
	if err := capstan.CheckUpdatePlan(org, p, i); err != nil {
		return err
	}
	type outcome struct{ plan, intent capstan.Meta }
	res, err := s.write(ctx, "cypher.UpdatePlan", func(tx neo4j.ManagedTransaction) (any, error) {
		var o outcome
		if i != nil {
			meta, err := s.putIntent(ctx, tx, org, i)
			if err != nil {
				return nil, err
			}
			o.intent = meta
		}
		m, err := checkVersion(ctx, tx, "plan", p.ID, uid(org, p.ID), p.Version, qPlanVersion)
		if err != nil {
			return nil, err
		}
		var old capstan.Plan
		if err := json.Unmarshal([]byte(str(m["json"])), &old); err != nil {
			return nil, err
		}
		if old.IntentID != p.IntentID {
			return nil, capstan.Errorf(capstan.EINVALID, "a plan cannot move to another intent")
		}
		c := *p
		c.Meta.CreatedAt = old.CreatedAt
		s.touch(&c.Meta, org, false)
		if err := s.putRevision(ctx, tx, org, &old, &c); err != nil {
			return nil, err
		}
		data, err := json.Marshal(&c)
		if err != nil {
			return nil, err
		}
		if _, err := tx.Run(ctx, qUpdatePlan, map[string]any{"uid": uid(org, p.ID), "status": string(c.Status), "version": c.Version, "json": string(data)}); err != nil {
			return nil, err
		}
		o.plan = c.Meta
		return o, s.writeBindings(ctx, tx, org, &c)
	})
	if err != nil {
		return err
	}
	o := res.(outcome)
	p.Meta = o.plan
	if i != nil {
		i.Meta = o.intent
	}
	return nil
}

// GetPlan returns a plan by id.
func (s *Store) GetPlan(ctx context.Context, org, id string) (*capstan.Plan, error) {
	res, err := s.readOne(ctx, "cypher.GetPlan", func(tx runner) (any, error) {
		return queryJSON[capstan.Plan](ctx, tx, `MATCH (p:Plan {uid: $uid}) RETURN p.json AS json`, map[string]any{"uid": uid(org, id)})
	})
	if err != nil {
		return nil, err
	}
	list := res.([]*capstan.Plan)
	if len(list) == 0 {
		return nil, capstan.NotFound("plan", id)
	}
	return list[0], nil
}

// ListPlans returns the plans of an intent, oldest first.
func (s *Store) ListPlans(ctx context.Context, org, intentID string) ([]*capstan.Plan, error) {
	res, err := s.readOne(ctx, "cypher.ListPlans", func(tx runner) (any, error) {
		return queryJSON[capstan.Plan](ctx, tx, `MATCH (p:Plan) WHERE p.org = $org AND p.intent_id = $intent RETURN p.json AS json ORDER BY p.id`,
			map[string]any{"org": org, "intent": intentID})
	})
	if err != nil {
		return nil, err
	}
	return res.([]*capstan.Plan), nil
}

const qProviderBindings = `
MATCH (p:Plan)-[:HAS_BINDING]->(b:Binding)-[:BOUND_TO]->(:Resource {uid: $uid})
RETURN p.id AS plan, b.key AS binding
ORDER BY p.id DESC, b.key
LIMIT $limit`

// ListProviderBindings follows BOUND_TO edges back from the resource to
// the bindings and plans that bind it, newest plan first.
func (s *Store) ListProviderBindings(ctx context.Context, org, resourceID string, limit int) ([]capstan.ProviderBinding, error) {
	if err := capstan.CheckOrg(org); err != nil {
		return nil, err
	}
	res, err := s.read(ctx, "cypher.ListProviderBindings", func(tx neo4j.ManagedTransaction) (any, error) {
		r, err := tx.Run(ctx, qProviderBindings, map[string]any{"uid": uid(org, resourceID), "limit": capstan.LimitOr(limit, 100)})
		if err != nil {
			return nil, err
		}
		var out []capstan.ProviderBinding
		for r.Next(ctx) {
			plan, _ := r.Record().Get("plan")
			binding, _ := r.Record().Get("binding")
			out = append(out, capstan.ProviderBinding{PlanID: str(plan), Binding: str(binding)})
		}
		return out, r.Err()
	})
	if err != nil {
		return nil, err
	}
	return res.([]capstan.ProviderBinding), nil
}
