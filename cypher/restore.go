package cypher

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

// qHoldsOrganization seeks the unique indexes of what every organization
// that was ever written has: packs, resources, capabilities, intents,
// operations, secrets.
const qHoldsOrganization = `
RETURN EXISTS { MATCH (n:ScenarioPack) WHERE n.uid STARTS WITH $prefix } OR
       EXISTS { MATCH (n:Resource) WHERE n.ukey STARTS WITH $prefix } OR
       EXISTS { MATCH (n:Capability) WHERE n.uid STARTS WITH $prefix } OR
       EXISTS { MATCH (n:Intent) WHERE n.uid STARTS WITH $prefix } OR
       EXISTS { MATCH (n:Operation) WHERE n.uid STARTS WITH $prefix } OR
       EXISTS { MATCH (n:Secret) WHERE n.uid STARTS WITH $prefix } AS held`

const (
	qRestorePack    = `MATCH (p:ScenarioPack {uid: $uid}) SET p.json = $json`
	qRestoreIntents = `UNWIND $rows AS x
CREATE (i:Intent {uid: x.uid, org: $org, id: x.id, status: x.status, version: x.version, json: x.json})`
	qRestorePlans = `UNWIND $rows AS x
MATCH (i:Intent {uid: x.intent})
CREATE (p:Plan {uid: x.uid, org: $org, id: x.id, intent_id: x.intent_id, status: x.status, version: x.version, json: x.json})-[:FOR]->(i)`
	qRestoreRevisions = `UNWIND $rows AS x
MATCH (p:Plan {uid: x.plan})
CREATE (r:PlanRevision {uid: x.uid, org: $org, plan_id: x.plan_id, revision: x.revision, digest: x.digest, json: x.json})-[:REVISION_OF]->(p)`
	qRestoreOperations = `UNWIND $rows AS x
CREATE (o:Operation {uid: x.uid, org: $org, id: x.id, status: x.status, intent_id: x.intent, plan_id: x.plan,
  resource_key: x.resource, created_at: x.created, version: x.version, active: false, last_seq: 0, json: x.json,
  parent: x.parent, open_patches: x.open_patches, touched: 0})
FOREACH (_ IN CASE WHEN x.idem = '' THEN [] ELSE [1] END | SET o.idem_uid = x.idem)`
	qRestoreRecords = `UNWIND $rows AS x
CREATE (:OpRecord {op: x.op, kind: x.kind, key: x.key, org: $org, json: x.json})`
	qRestoreEvents = `UNWIND $rows AS x
CREATE (:Event {org: $org, op: x.op, seq: x.seq, json: x.json})`
	qRestorePatches = `UNWIND $rows AS x
CREATE (:PlanPatch {uid: x.uid, org: $org, id: x.id, op: x.op, version: x.version, status: x.status, json: x.json})`
	qRestoreSecrets = `UNWIND $rows AS x
CREATE (:Secret {uid: x.uid, org: $org, name: x.name, json: x.json})
WITH count(*) AS n
MERGE (g:SecretGeneration {org: $org}) SET g.gen = coalesce(g.gen, 0) + 1`
	// Operations are written inactive and untouched: no executor of a
	// replica on this database resumes one, and no tailer publishes it,
	// before Finish makes each whole at once.
	qRestoreFinishOperations = `UNWIND $rows AS x
MATCH (o:Operation {uid: x.op}) SET o.last_seq = x.last, o.active = x.active, o.touched = timestamp()`
)

// restoreLabels are the labels a restore writes: what Abort removes.
// The organization's :SecretGeneration stays and moves on: a replica's
// redactor built from secrets the aborted restore wrote must see a change
// when the next restore writes others.
var restoreLabels = []string{"Event", "OpRecord", "PlanPatch", "Operation", "PlanRevision", "Binding", "Plan", "Intent",
	"Resource", "Profile", "Policy", "Scenario", "ScenarioPack", "ResourceType", "Capability", "Secret"}

// BeginRestore starts loading org's records; the database must hold
// nothing of org (ECONFLICT).
func (s *Store) BeginRestore(ctx context.Context, org string) (capstan.Restoration, error) {
	if err := capstan.CheckOrg(org); err != nil {
		return nil, err
	}
	res, err := s.readOne(ctx, "cypher.BeginRestore", func(r runner) (any, error) {
		rec, err := single(ctx, r, qHoldsOrganization, map[string]any{"prefix": org + "|"})
		if err != nil {
			return nil, err
		}
		held, _ := rec.Get("held")
		return held, nil
	})
	if err != nil {
		return nil, err
	}
	if held, _ := res.(bool); held {
		return nil, capstan.Errorf(capstan.ECONFLICT, "the database already holds organization %s: a backup restores into a store without it", org)
	}
	return &restoration{s: s, org: org, last: map[string]int64{}, active: map[string]bool{}, edges: resourceEdges{rels: map[capstan.RelationshipType][]map[string]any{}}}, nil
}

type restoration struct {
	s   *Store
	org string
	// edges are the resources' relationships, linked by Finish once
	// every resource exists; last is each operation's last sequence,
	// active whether it is unfinished.
	edges  resourceEdges
	last   map[string]int64
	active map[string]bool
}

// Write stores a batch in one transaction, each record as it was, with
// the graph this store derives from it.
func (r *restoration) Write(ctx context.Context, batch []capstan.BackupRecord) error {
	type outcome struct {
		edges  resourceEdges
		last   map[string]int64
		active map[string]bool
	}
	res, err := r.s.write(ctx, "cypher.Restore", func(tx neo4j.ManagedTransaction) (any, error) {
		w := &batchWriter{org: r.org, s: r.s, rows: map[string][]map[string]any{}, last: map[string]int64{}, active: map[string]bool{}}
		for _, rec := range batch {
			if err := w.add(rec); err != nil {
				return nil, capstan.Errorf(capstan.EINVALID, "backup record %s %s: %v", rec.Kind, rec.Key, err)
			}
		}
		edges, err := w.flush(ctx, tx)
		return outcome{edges, w.last, w.active}, err
	})
	if err != nil {
		return err
	}
	o := res.(outcome)
	for typ, rows := range o.edges.rels {
		r.edges.rels[typ] = append(r.edges.rels[typ], rows...)
	}
	r.edges.targets = append(r.edges.targets, o.edges.targets...)
	for op, seq := range o.last {
		r.last[op] = max(r.last[op], seq)
	}
	for op, active := range o.active {
		r.active[op] = active
	}
	return nil
}

// Finish links the resources, then makes every operation whole at once:
// its last sequence, which the executor's next step checks, and whether
// it is unfinished, which lets the executors resume it. Each runs in
// transactions of finishBatch rows.
func (r *restoration) Finish(ctx context.Context) error {
	for typ, rows := range r.edges.rels {
		for i := 0; i < len(rows); i += finishBatch {
			part := resourceEdges{rels: map[capstan.RelationshipType][]map[string]any{typ: rows[i:min(i+finishBatch, len(rows))]}}
			for _, row := range part.rels[typ] {
				part.targets = append(part.targets, str(row["to"]))
			}
			if _, err := r.s.writeOperation(ctx, "cypher.FinishRestore", func(tx neo4j.ManagedTransaction) (any, error) {
				return nil, part.link(ctx, tx, r.org)
			}); err != nil {
				return err
			}
		}
	}
	rows := make([]map[string]any, 0, len(r.active))
	for op, active := range r.active {
		rows = append(rows, map[string]any{"op": op, "last": r.last[op], "active": active})
	}
	for i := 0; i < len(rows); i += finishBatch {
		if _, err := r.s.writeOperation(ctx, "cypher.FinishRestore", func(tx neo4j.ManagedTransaction) (any, error) {
			_, err := tx.Run(ctx, qRestoreFinishOperations, map[string]any{"rows": rows[i:min(i+finishBatch, len(rows))]})
			return nil, err
		}); err != nil {
			return err
		}
	}
	return nil
}

// finishBatch bounds the rows of one of Finish's transactions.
const finishBatch = 10_000

// Abort removes every node of the organization, a thousand per
// transaction.
func (r *restoration) Abort(ctx context.Context) error {
	for _, label := range restoreLabels {
		_, err := r.s.writeStatement(ctx, "cypher.AbortRestore", func(run runner) (any, error) {
			return collect(ctx, run, `MATCH (n:`+label+`) WHERE n.org = $org CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 1000 ROWS`, map[string]any{"org": r.org})
		})
		if err != nil {
			return err
		}
	}
	_, err := r.s.writeStatement(ctx, "cypher.AbortRestore", func(run runner) (any, error) {
		return collect(ctx, run, `MATCH (g:SecretGeneration {org: $org}) SET g.gen = g.gen + 1`, map[string]any{"org": r.org})
	})
	return err
}

// batchWriter gathers a batch's rows by statement.
type batchWriter struct {
	s         *Store
	org       string
	packs     []capstan.ScenarioPack
	packData  []string
	resources []*capstan.Resource
	plans     []*capstan.Plan
	rows      map[string][]map[string]any
	last      map[string]int64
	active    map[string]bool
}

func (w *batchWriter) add(rec capstan.BackupRecord) error {
	org := w.org
	if !json.Valid(rec.Data) {
		return capstan.Errorf(capstan.EINVALID, "its data is not JSON")
	}
	data := string(rec.Data)
	switch rec.Kind {
	case capstan.BackupPack:
		var p capstan.ScenarioPack
		if err := json.Unmarshal(rec.Data, &p); err != nil {
			return err
		}
		w.packs, w.packData = append(w.packs, p), append(w.packData, data)
	case capstan.BackupResource:
		var res capstan.Resource
		if err := json.Unmarshal(rec.Data, &res); err != nil {
			return err
		}
		w.resources = append(w.resources, &res)
	case capstan.BackupIntent:
		var i capstan.Intent
		if err := json.Unmarshal(rec.Data, &i); err != nil {
			return err
		}
		w.rows[qRestoreIntents] = append(w.rows[qRestoreIntents], map[string]any{"uid": uid(org, i.ID), "id": i.ID,
			"status": string(i.Status), "version": i.Version, "json": data})
	case capstan.BackupPlan:
		var p capstan.Plan
		if err := json.Unmarshal(rec.Data, &p); err != nil {
			return err
		}
		w.plans = append(w.plans, &p)
		w.rows[qRestorePlans] = append(w.rows[qRestorePlans], map[string]any{"uid": uid(org, p.ID), "id": p.ID, "intent": uid(org, p.IntentID),
			"intent_id": p.IntentID, "status": string(p.Status), "version": p.Version, "json": data})
	case capstan.BackupPlanRevision:
		var rev capstan.PlanRevision
		if err := json.Unmarshal(rec.Data, &rev); err != nil {
			return err
		}
		w.rows[qRestoreRevisions] = append(w.rows[qRestoreRevisions], map[string]any{"uid": revisionUID(org, rev.PlanID, rev.Revision),
			"plan": uid(org, rev.PlanID), "plan_id": rev.PlanID, "revision": rev.Revision, "digest": rev.Digest, "json": data})
	case capstan.BackupOperation:
		var op capstan.Operation
		if err := json.Unmarshal(rec.Data, &op); err != nil {
			return err
		}
		idem := ""
		if op.IdempotencyKey != "" {
			idem = uid(org, op.IdempotencyKey)
		}
		w.active[uid(org, op.ID)] = !op.Status.Terminal()
		w.rows[qRestoreOperations] = append(w.rows[qRestoreOperations], map[string]any{"uid": uid(org, op.ID), "id": op.ID,
			"status": string(op.Status), "intent": op.IntentID, "plan": op.PlanID, "resource": op.ResourceKey, "created": op.CreatedAt,
			"version": op.Version, "json": data, "idem": idem, "parent": op.ParentID,
			"open_patches": len(op.OpenPatches)})
	case capstan.BackupEvent:
		seq, err := strconv.ParseInt(rec.Key, 10, 64)
		if err != nil || seq <= 0 {
			return capstan.Errorf(capstan.EINVALID, "an event's key is its sequence, a positive number")
		}
		op := uid(org, rec.Operation)
		w.last[op] = max(w.last[op], seq)
		w.rows[qRestoreEvents] = append(w.rows[qRestoreEvents], map[string]any{"op": op, "seq": seq, "json": data})
	case capstan.BackupPlanPatch:
		var p capstan.PlanPatch
		if err := json.Unmarshal(rec.Data, &p); err != nil {
			return err
		}
		w.rows[qRestorePatches] = append(w.rows[qRestorePatches], map[string]any{"uid": uid(org, p.ID), "id": p.ID, "op": p.OperationID,
			"version": p.Version, "status": string(p.Status), "json": data})
	case capstan.BackupSecret:
		w.rows[qRestoreSecrets] = append(w.rows[qRestoreSecrets], map[string]any{"uid": uid(org, rec.Key), "name": rec.Key, "json": data})
	default:
		kind, ok := capstan.StoredKindOf(rec.Kind)
		if !ok {
			return capstan.Errorf(capstan.EINVALID, "this store does not keep records of kind %q", rec.Kind)
		}
		w.rows[qRestoreRecords] = append(w.rows[qRestoreRecords], map[string]any{"op": uid(org, rec.Operation), "kind": kind,
			"key": rec.Key, "json": data})
	}
	return nil
}

// restoreOrder is the order of the batch's statements: what a statement
// matches is written by one before it.
var restoreOrder = []string{qRestoreIntents, qRestorePlans, qRestoreRevisions, qRestoreOperations, qRestoreRecords,
	qRestoreEvents, qRestorePatches, qRestoreSecrets}

// flush writes the batch: packs through the writer installs use, then
// resources without their relationships (returned, for Finish), then
// the rest by statement.
func (w *batchWriter) flush(ctx context.Context, tx neo4j.ManagedTransaction) (resourceEdges, error) {
	for i := range w.packs {
		if err := w.s.writePack(ctx, tx, w.org, &w.packs[i]); err != nil {
			return resourceEdges{}, err
		}
		if _, err := tx.Run(ctx, qRestorePack, map[string]any{"uid": uid(w.org, w.packs[i].Ref()), "json": w.packData[i]}); err != nil {
			return resourceEdges{}, err
		}
	}
	var edges resourceEdges
	if len(w.resources) > 0 {
		var err error
		if edges, err = writeResourceNodes(ctx, tx, w.org, w.resources, nil); err != nil {
			return resourceEdges{}, err
		}
	}
	for _, q := range restoreOrder {
		if rows := w.rows[q]; len(rows) > 0 {
			if _, err := tx.Run(ctx, q, map[string]any{"rows": rows, "org": w.org}); err != nil {
				return resourceEdges{}, err
			}
		}
		if q == qRestorePlans {
			for _, p := range w.plans {
				if err := w.s.writeBindings(ctx, tx, w.org, p); err != nil {
					return resourceEdges{}, err
				}
			}
		}
	}
	return edges, nil
}
