package cypher

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

// A plan's revisions are :PlanRevision nodes (REVISION_OF their :Plan)
// holding their snapshot's JSON; a PlanPatch is a :PlanPatch node keyed
// by its operation, written in the operation's step transactions.

const qRevisionExists = `OPTIONAL MATCH (r:PlanRevision {uid: $uid}) RETURN r IS NOT NULL AS found`

const qCreateRevision = `
MATCH (p:Plan {uid: $plan})
CREATE (r:PlanRevision {uid: $uid, org: $org, plan_id: $plan_id, revision: $revision, digest: $digest, json: $json})-[:REVISION_OF]->(p)`

func revisionUID(org, planID string, rev int) string {
	return uid(org, "revision", planID, fmt.Sprint(rev))
}

// putRevision stores the snapshot of p's revision when it has none (p's
// plan node must exist) and sets p's digest to its revision's.
func (s *Store) putRevision(ctx context.Context, tx neo4j.ManagedTransaction, org string, stored, p *capstan.Plan) error {
	exists := false
	if stored != nil {
		recs, err := collect(ctx, tx, qRevisionExists, map[string]any{"uid": revisionUID(org, p.ID, p.Revision)})
		if err != nil {
			return err
		}
		exists, _ = recs[0].AsMap()["found"].(bool)
	}
	snap, data, err := capstan.PlanRevisionWrite(stored, p, exists)
	if err != nil || snap == nil {
		return err
	}
	_, err = tx.Run(ctx, qCreateRevision, map[string]any{"plan": uid(org, p.ID), "uid": revisionUID(org, p.ID, p.Revision), "org": org,
		"plan_id": p.ID, "revision": p.Revision, "digest": snap.Digest, "json": string(data)})
	return err
}

// GetPlanRevision returns one revision of a plan.
func (s *Store) GetPlanRevision(ctx context.Context, org, planID string, revision int) (*capstan.PlanRevision, error) {
	res, err := s.readOne(ctx, "cypher.GetPlanRevision", func(tx runner) (any, error) {
		return queryJSON[capstan.PlanRevision](ctx, tx, `MATCH (r:PlanRevision {uid: $uid}) RETURN r.json AS json`,
			map[string]any{"uid": revisionUID(org, planID, revision)})
	})
	if err != nil {
		return nil, err
	}
	list := res.([]*capstan.PlanRevision)
	if len(list) == 0 {
		return nil, capstan.Errorf(capstan.ENOTFOUND, "%s has no revision %d", capstan.Named("plan", planID), revision)
	}
	return list[0], nil
}

// ListPlanRevisions returns every revision of a plan, oldest first.
func (s *Store) ListPlanRevisions(ctx context.Context, org, planID string) ([]*capstan.PlanRevision, error) {
	res, err := s.readOne(ctx, "cypher.ListPlanRevisions", func(tx runner) (any, error) {
		return queryJSON[capstan.PlanRevision](ctx, tx, `MATCH (r:PlanRevision)-[:REVISION_OF]->(:Plan {uid: $plan}) RETURN r.json AS json ORDER BY r.revision`,
			map[string]any{"plan": uid(org, planID)})
	})
	if err != nil {
		return nil, err
	}
	return res.([]*capstan.PlanRevision), nil
}

const qPatchState = `MATCH (x:PlanPatch {uid: $uid}) SET x.locked = true REMOVE x.locked RETURN x.version AS version, x.op AS op, x.json AS json`

const qCreatePatch = `CREATE (:PlanPatch {uid: $uid, org: $org, id: $id, op: $op, version: $version, status: $status, json: $json})`

const qUpdatePatch = `MATCH (x:PlanPatch {uid: $uid}) SET x.version = $version, x.status = $status, x.json = $json`

// putPatches creates (no id) or updates (at its current version) each
// patch inside tx and returns their new Meta.
func (s *Store) putPatches(ctx context.Context, tx neo4j.ManagedTransaction, org, opID string, patches []capstan.PlanPatch) ([]capstan.Meta, error) {
	out := make([]capstan.Meta, len(patches))
	for i := range patches {
		p := patches[i]
		created := p.Version == 0
		q := qCreatePatch
		if created && p.ID != "" {
			recs, err := collect(ctx, tx, qPatchState, map[string]any{"uid": uid(org, p.ID)})
			if err != nil {
				return nil, err
			}
			if len(recs) > 0 {
				return nil, capstan.StaleVersion("plan patch", p.ID, -1, 0) // it exists: a create is a write from no version
			}
		}
		if !created {
			q = qUpdatePatch
			recs, err := collect(ctx, tx, qPatchState, map[string]any{"uid": uid(org, p.ID)})
			if err != nil {
				return nil, err
			}
			if len(recs) == 0 || str(recs[0].AsMap()["op"]) != opID {
				return nil, capstan.NotFound("plan patch", p.ID)
			}
			var old capstan.PlanPatch
			if err := json.Unmarshal([]byte(str(recs[0].AsMap()["json"])), &old); err != nil {
				return nil, err
			}
			if old.Version != p.Version {
				return nil, capstan.StaleVersion("plan patch", p.ID, old.Version, p.Version)
			}
			p.CreatedAt = old.CreatedAt
		}
		s.touch(&p.Meta, org, created)
		data, err := json.Marshal(&p)
		if err != nil {
			return nil, err
		}
		if _, err := tx.Run(ctx, q, map[string]any{"uid": uid(org, p.ID), "org": org, "id": p.ID, "op": opID, "version": p.Version,
			"status": string(p.Status), "json": string(data)}); err != nil {
			return nil, err
		}
		out[i] = p.Meta
	}
	return out, nil
}

// GetPlanPatch returns a patch by id.
func (s *Store) GetPlanPatch(ctx context.Context, org, id string) (*capstan.PlanPatch, error) {
	res, err := s.readOne(ctx, "cypher.GetPlanPatch", func(tx runner) (any, error) {
		return queryJSON[capstan.PlanPatch](ctx, tx, `MATCH (x:PlanPatch {uid: $uid}) RETURN x.json AS json`, map[string]any{"uid": uid(org, id)})
	})
	if err != nil {
		return nil, err
	}
	list := res.([]*capstan.PlanPatch)
	if len(list) == 0 {
		return nil, capstan.NotFound("plan patch", id)
	}
	return list[0], nil
}

// ListPlanPatches returns an operation's patches, oldest first.
func (s *Store) ListPlanPatches(ctx context.Context, org, opID string) ([]*capstan.PlanPatch, error) {
	res, err := s.readOne(ctx, "cypher.ListPlanPatches", func(tx runner) (any, error) {
		return queryJSON[capstan.PlanPatch](ctx, tx, `MATCH (x:PlanPatch) WHERE x.op = $op AND x.org = $org RETURN x.json AS json ORDER BY x.id`,
			map[string]any{"op": opID, "org": org})
	})
	if err != nil {
		return nil, err
	}
	out := res.([]*capstan.PlanPatch)
	if out == nil {
		out = []*capstan.PlanPatch{}
	}
	return out, nil
}
