package cypher

import (
	"context"
	"encoding/json"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

// An operation is an :Operation node (json, status, active flag, the last
// timeline sequence); what it produces are :OpRecord nodes keyed by kind
// and key (unique per operation); its timeline is :Event nodes unique by
// (op, seq). Each step is one transaction that takes the operation's lock
// first, so sequences are gap-free and versions are checked; the
// constraint on (op, seq) would refuse a second event at a sequence even
// if a step got that wrong.

const qCreateOperation = `
CREATE (o:Operation {uid: $uid, org: $org, id: $id, status: $status, intent_id: $intent, plan_id: $plan,
  resource_key: $resource, created_at: $created, version: $version, active: $active, last_seq: $last, json: $json,
  parent: $parent, touched: timestamp()})
FOREACH (_ IN CASE WHEN $idem = '' THEN [] ELSE [1] END | SET o.idem_uid = $idem)`

// QueryOperationRecords reads an operation's records in (kind, key) order
// through the op_record_key constraint's index (the existence checks let
// the planner seek by the key's prefix).
const QueryOperationRecords = `MATCH (r:OpRecord) WHERE r.op = $op AND r.kind IN $kinds AND r.key IS NOT NULL
RETURN r.kind AS kind, r.json AS json ORDER BY r.kind, r.key`

// QueryEvents reads an operation's timeline after a sequence through the
// event_seq constraint's index.
const QueryEvents = `MATCH (e:Event) WHERE e.op = $op AND e.seq > $after RETURN e.json AS json ORDER BY e.seq LIMIT $limit`

const qAppendEvents = `
UNWIND $rows AS row
CREATE (:Event {org: $org, op: $op, seq: row.seq, json: row.json})`

// StartOperation stores a new operation with its frozen plan and first
// events; under a fence, only while the fence is its lease's grant (read
// in the same transaction, as a step's is).
func (s *Store) StartOperation(ctx context.Context, org string, op *capstan.Operation, plan *capstan.Plan, in *capstan.Intent, events []capstan.OperationEvent, fence *capstan.Fence) error {
	if err := capstan.CheckOrg(org); err != nil {
		return err
	}
	if err := capstan.CheckStart(op, plan, in); err != nil {
		return err
	}
	o2 := *op
	s.touch(&o2.Meta, org, true)
	type outcome struct {
		plan, intent capstan.Meta
		events       []capstan.OperationEvent
	}
	res, err := s.writeOperation(ctx, "cypher.StartOperation", func(tx neo4j.ManagedTransaction) (any, error) {
		if err := checkFence(ctx, tx, fence); err != nil {
			return nil, err
		}
		if op.IdempotencyKey != "" {
			taken, err := exists(ctx, tx, `MATCH (o:Operation {idem_uid: $idem}) RETURN o.id`, map[string]any{"idem": uid(org, op.IdempotencyKey)})
			if err != nil {
				return nil, err
			}
			if taken {
				return nil, capstan.Errorf(capstan.ECONFLICT, "an operation was already started with idempotency key %s", op.IdempotencyKey)
			}
		}
		pm, err := s.putPlan(ctx, tx, org, plan)
		if err != nil {
			return nil, err
		}
		var im capstan.Meta
		if in != nil {
			if im, err = s.putIntent(ctx, tx, org, in); err != nil {
				return nil, err
			}
		}
		data, _ := json.Marshal(&o2)
		idem := ""
		if op.IdempotencyKey != "" {
			idem = uid(org, op.IdempotencyKey)
		}
		if _, err := tx.Run(ctx, qCreateOperation, map[string]any{"uid": uid(org, o2.ID), "org": org, "id": o2.ID, "status": string(o2.Status),
			"intent": o2.IntentID, "plan": o2.PlanID, "resource": o2.ResourceKey, "created": o2.CreatedAt, "version": o2.Version, "active": !o2.Status.Terminal(), "json": string(data), "idem": idem, "last": int64(len(events)), "parent": o2.ParentID}); err != nil {
			return nil, err
		}
		evs, _, err := s.appendEvents(ctx, tx, org, o2.ID, 0, events)
		if err != nil {
			return nil, err
		}
		return outcome{pm, im, evs}, nil
	})
	if err != nil {
		return err
	}
	o := res.(outcome)
	op.Meta, plan.Meta = o2.Meta, o.plan
	if in != nil {
		in.Meta = o.intent
	}
	copy(events, o.events)
	s.remember(uid(org, o2.ID), o2.Meta, int64(len(events)), o2.Status)
	return nil
}

// putPlan writes a plan after checking its version under its lock.
func (s *Store) putPlan(ctx context.Context, tx neo4j.ManagedTransaction, org string, p *capstan.Plan) (capstan.Meta, error) {
	m, err := checkVersion(ctx, tx, "plan", p.ID, uid(org, p.ID), p.Version, qPlanVersion)
	if err != nil {
		return capstan.Meta{}, err
	}
	var old capstan.Plan
	if err := json.Unmarshal([]byte(str(m["json"])), &old); err != nil {
		return capstan.Meta{}, err
	}
	c := *p
	c.Meta.CreatedAt = old.CreatedAt
	s.touch(&c.Meta, org, false)
	if err := s.putRevision(ctx, tx, org, &old, &c); err != nil {
		return capstan.Meta{}, err
	}
	data, err := json.Marshal(&c)
	if err != nil {
		return capstan.Meta{}, err
	}
	if _, err := tx.Run(ctx, qUpdatePlan, map[string]any{"uid": uid(org, p.ID), "status": string(c.Status), "version": c.Version, "json": string(data)}); err != nil {
		return capstan.Meta{}, err
	}
	return c.Meta, s.writeBindings(ctx, tx, org, &c)
}

// appendEvents writes events after sequence last and returns them numbered.
func (s *Store) appendEvents(ctx context.Context, tx neo4j.ManagedTransaction, org, opID string, last int64, events []capstan.OperationEvent) ([]capstan.OperationEvent, int64, error) {
	out, rows, last, err := s.eventRows(opID, last, events)
	if err != nil || len(rows) == 0 {
		return out, last, err
	}
	if _, err := tx.Run(ctx, qAppendEvents, map[string]any{"rows": rows, "org": org, "op": uid(org, opID)}); err != nil {
		return nil, 0, err
	}
	return out, last, nil
}

// eventRows numbers events after sequence last and returns them with the
// rows that store them.
func (s *Store) eventRows(opID string, last int64, events []capstan.OperationEvent) ([]capstan.OperationEvent, []map[string]any, int64, error) {
	now := s.now().UTC()
	out := make([]capstan.OperationEvent, len(events))
	rows := make([]map[string]any, len(events))
	for i, e := range events {
		last++
		e.OperationID, e.Sequence = opID, last
		if e.At.IsZero() {
			e.At = now
		}
		data, err := json.Marshal(e)
		if err != nil {
			return nil, nil, 0, err
		}
		out[i] = e
		rows[i] = map[string]any{"seq": last, "json": string(data)}
	}
	return out, rows, last, nil
}

func (s *Store) getOperation(ctx context.Context, op, q string, params map[string]any) (*capstan.Operation, error) {
	res, err := s.readOne(ctx, op, func(tx runner) (any, error) {
		return queryJSON[capstan.Operation](ctx, tx, q, params)
	})
	if err != nil {
		return nil, err
	}
	list := res.([]*capstan.Operation)
	if len(list) == 0 {
		return nil, nil
	}
	return list[0], nil
}

// GetOperation returns an operation by id.
func (s *Store) GetOperation(ctx context.Context, org, id string) (*capstan.Operation, error) {
	op, err := s.getOperation(ctx, "cypher.GetOperation", `MATCH (o:Operation {uid: $uid}) RETURN o.json AS json`, map[string]any{"uid": uid(org, id)})
	if err == nil && op == nil {
		err = capstan.NotFound("operation", id)
	}
	return op, err
}

// GetOperationByKey returns the operation started with an idempotency key.
func (s *Store) GetOperationByKey(ctx context.Context, org, idem string) (*capstan.Operation, error) {
	op, err := s.getOperation(ctx, "cypher.GetOperationByKey", `MATCH (o:Operation {idem_uid: $idem}) RETURN o.json AS json`, map[string]any{"idem": uid(org, idem)})
	if err == nil && op == nil {
		err = capstan.NotFound("operation with idempotency key", idem)
	}
	return op, err
}

const qOperationFilter = `
MATCH (o:Operation) WHERE o.org = $org AND ($status = '' OR o.status = $status)
  AND ($intent = '' OR o.intent_id = $intent) AND ($plan = '' OR o.plan_id = $plan)
  AND ($resource = '' OR o.resource_key = $resource) AND (NOT $awaiting_patch OR coalesce(o.open_patches, 0) > 0)
  AND ($after_time IS NULL OR o.created_at > $after_time) AND ($before_time IS NULL OR o.created_at < $before_time)`

// ListOperations returns a page of operations ordered by id.
func (s *Store) ListOperations(ctx context.Context, org string, f capstan.OperationFilter) ([]*capstan.Operation, int, error) {
	params := map[string]any{"org": org, "status": string(f.Status), "intent": f.IntentID, "plan": f.PlanID, "resource": f.ResourceKey, "awaiting_patch": f.AwaitingPatch,
		"after_time": optionalTime(f.CreatedAfter), "before_time": optionalTime(f.CreatedBefore), "after": f.After, "limit": capstan.LimitOr(f.Limit, 100)}
	return listPage[capstan.Operation](s, ctx, "cypher.ListOperations",
		qOperationFilter+` AND o.id > $after RETURN o.json AS json ORDER BY o.id LIMIT $limit`, qOperationFilter+` RETURN count(o) AS total`, params)
}

// OperationRecords returns what an operation produced.
func (s *Store) OperationRecords(ctx context.Context, org, opID string, kinds ...string) (*capstan.OperationRecords, error) {
	kinds, err := capstan.SelectRecordKinds(kinds)
	if err != nil {
		return nil, err
	}
	res, err := s.read(ctx, "cypher.OperationRecords", func(tx neo4j.ManagedTransaction) (any, error) {
		found, err := exists(ctx, tx, `MATCH (o:Operation {uid: $uid}) RETURN o.id`, map[string]any{"uid": uid(org, opID)})
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, capstan.NotFound("operation", opID)
		}
		return collect(ctx, tx, QueryOperationRecords, map[string]any{"op": uid(org, opID), "kinds": kinds})
	})
	if err != nil {
		return nil, err
	}
	out := &capstan.OperationRecords{}
	for _, rec := range res.([]*neo4j.Record) {
		m := rec.AsMap()
		if err = out.Add(str(m["kind"]), []byte(str(m["json"]))); err != nil {
			return nil, capstan.Wrap("cypher.OperationRecords", err)
		}
	}
	return out, nil
}

// ListEvents returns events of an operation after a sequence number.
func (s *Store) ListEvents(ctx context.Context, org, opID string, after int64, limit int) ([]capstan.OperationEvent, error) {
	res, err := s.read(ctx, "cypher.ListEvents", func(tx neo4j.ManagedTransaction) (any, error) {
		found, err := exists(ctx, tx, `MATCH (o:Operation {uid: $uid}) RETURN o.id`, map[string]any{"uid": uid(org, opID)})
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, capstan.NotFound("operation", opID)
		}
		return queryJSON[capstan.OperationEvent](ctx, tx, QueryEvents,
			map[string]any{"op": uid(org, opID), "after": after, "limit": capstan.LimitOr(limit, 1000)})
	})
	if err != nil {
		return nil, err
	}
	list := res.([]*capstan.OperationEvent)
	out := make([]capstan.OperationEvent, len(list))
	for i, e := range list {
		out[i] = *e
	}
	return out, nil
}

// UnfinishedOperations lists every operation not in a terminal status.
func (s *Store) UnfinishedOperations(ctx context.Context) ([]capstan.OperationRef, error) {
	res, err := s.readOne(ctx, "cypher.UnfinishedOperations", func(tx runner) (any, error) {
		recs, err := collect(ctx, tx, `MATCH (o:Operation) WHERE o.active = true RETURN o.org AS org, o.id AS id ORDER BY o.uid`, nil)
		if err != nil {
			return nil, err
		}
		out := make([]capstan.OperationRef, 0, len(recs))
		for _, rec := range recs {
			m := rec.AsMap()
			out = append(out, capstan.OperationRef{OrganizationID: str(m["org"]), ID: str(m["id"])})
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return res.([]capstan.OperationRef), nil
}

// optionalTime is a time parameter, or null for the zero time.
func optionalTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}
