package cypher

import (
	"context"
	"encoding/json"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

// An operation moves in steps (ApplyOperationChange), and each step is
// one write transaction. On this store a round trip costs about as much
// as the write itself, so a step is one statement whenever the store
// already knows the operation's version and last timeline sequence from
// its own previous step (a stepCursor); the statement takes the
// operation's lock and checks both before it writes. When another writer
// got there first (another process, or a decision through the API on
// another store value), the statement writes nothing and the step reads
// the operation under its lock and tries again: a stale version is then
// a conflict, as always.

const qOperationState = `MATCH (o:Operation {uid: $uid}) SET o.locked = true REMOVE o.locked RETURN o.version AS version, o.last_seq AS last, o.json AS json, o.step AS step`

// qApplyStep writes steps of operations in one statement: for each, it
// locks the operation; a step it finds written already (the operation's
// last step is this one: a retry after the answer was lost) it returns
// without writing again; otherwise it checks that the operation is still
// at version expected with last sequence prev (and, for an executor's step, that its shard's lease
// is still the grant it carries and has not run out), and writes the operation, its records
// (upserted by kind and key) and its new timeline events. It returns the
// operations it wrote; a step whose check failed writes nothing.
const qApplyStep = `
UNWIND $steps AS st
MATCH (o:Operation {uid: st.op})
SET o.locked = true REMOVE o.locked
WITH o, st, coalesce(o.step = st.step, false) AS again
WITH o, st, again WHERE again OR (o.version = st.expected AND o.last_seq = st.prev
  AND (NOT st.fenced OR EXISTS { MATCH (l:ExecutorLease {key: st.fence_key}) WHERE l.holder = st.fence_holder AND coalesce(l.token, 0) = st.fence_token AND l.expires > timestamp() }))
CALL (o, st, again) {
  WITH o, st WHERE NOT again
  SET o.status = st.status, o.version = st.version, o.active = st.active, o.last_seq = st.last, o.json = st.json, o.open_patches = st.open_patches,
      o.touched = timestamp(), o.prev_seq = st.prev, o.step = st.step
  WITH o, st
  CALL (o, st) {
    UNWIND st.records AS row
    MERGE (r:OpRecord {op: st.op, kind: row.kind, key: row.key})
    SET r.org = st.org, r.json = row.json
  }
  CALL (o, st) {
    UNWIND st.events AS row
    CREATE (:Event {org: st.org, op: st.op, seq: row.seq, json: row.json})
  }
}
RETURN st.op AS op`

// stepCursor is what this store wrote last for an operation: its
// version, its timeline's last sequence and when it was created.
type stepCursor struct {
	version, last int64
	created       time.Time
}

// stepOutcome is what a committed step wrote.
type stepOutcome struct {
	meta    capstan.Meta
	last    int64
	events  []capstan.OperationEvent
	records *capstan.OperationChange
	writes  capstan.ChangeMetas
}

// putChangeWrites writes the intent, plan and resources a change carries
// inside tx, in that order (a created resource may be a later one's
// relationship target).
func (s *Store) putChangeWrites(ctx context.Context, tx neo4j.ManagedTransaction, org string, ch *capstan.OperationChange) (w capstan.ChangeMetas, err error) {
	if ch.Intent != nil {
		if w.Intent, err = s.putIntent(ctx, tx, org, ch.Intent); err != nil {
			return w, err
		}
	}
	if ch.Plan != nil {
		if w.Plan, err = s.putPlan(ctx, tx, org, ch.Plan); err != nil {
			return w, err
		}
	}
	for _, r := range ch.Resources {
		var m capstan.Meta
		if r.ID == "" {
			m, err = s.createResource(ctx, tx, org, r)
		} else {
			m, err = s.updateResource(ctx, tx, org, r)
		}
		if err != nil {
			return w, err
		}
		w.Resources = append(w.Resources, m)
	}
	return w, nil
}

// ApplyOperationChange commits one step of an operation.
func (s *Store) ApplyOperationChange(ctx context.Context, org string, ch *capstan.OperationChange) error {
	if err := capstan.CheckStep(org, ch); err != nil {
		return err
	}
	op := ch.Operation
	opUID := uid(org, op.ID)
	var o *stepOutcome
	var err error
	// A step that writes an intent, a plan or resources is one managed
	// transaction (several statements); an ordinary one may be a single
	// statement.
	try := &stepTry{id: capstan.NewID()}
	if cur, ok := s.cursors.Load(opUID); ok && cur.(stepCursor).version == op.Version && !ch.Writes() {
		o, err = s.applyKnownStep(ctx, org, ch, cur.(stepCursor), try)
	}
	if err == nil && o == nil {
		o, err = s.applyLockedStep(ctx, org, ch, opUID, try)
		// A connection lost during the commit leaves it unknown whether
		// the step committed (the driver does not try again): the
		// locked path tells, finding the step's id or not.
		for again := 0; again < lostCommitTries && capstan.ErrorCode(err) == capstan.EUNAVAILABLE && try.out != nil && ctx.Err() == nil; again++ {
			o, err = s.applyLockedStep(ctx, org, ch, opUID, try)
		}
	}
	if err != nil {
		s.cursors.Delete(opUID)
		return err
	}
	s.remember(opUID, o.meta, o.last, op.Status)
	op.Meta = o.meta
	o.writes.Apply(ch)
	copy(ch.Events, o.events)
	ch.NodeRuns, ch.Gates, ch.Evidence, ch.Artifacts, ch.Interventions = o.records.NodeRuns, o.records.Gates, o.records.Evidence, o.records.Artifacts, o.records.Interventions
	return nil
}

// applyKnownStep commits ch on the operation at cur, as this store last
// wrote it, in one auto-commit statement shared with the steps of other
// operations that commit at the same moment (group.go). It returns nil
// when the operation is no longer at cur (someone else wrote it);
// running the step again is safe for the same reason.
func (s *Store) applyKnownStep(ctx context.Context, org string, ch *capstan.OperationChange, cur stepCursor, try *stepTry) (*stepOutcome, error) {
	row, out, err := s.stepRow(ctx, org, ch, cur, try)
	if err != nil {
		return nil, err
	}
	applied, err := s.commitStep(ctx, row)
	if err != nil || !applied {
		return nil, err
	}
	return out, nil
}

// applyLockedStep reads the operation under its lock, checks the
// change's version against it and commits ch, in one managed transaction.
func (s *Store) applyLockedStep(ctx context.Context, org string, ch *capstan.OperationChange, opUID string, try *stepTry) (*stepOutcome, error) {
	op := ch.Operation
	res, err := s.writeOperation(ctx, "cypher.ApplyOperationChange", func(tx neo4j.ManagedTransaction) (any, error) {
		recs, err := collect(ctx, tx, qOperationState, map[string]any{"uid": opUID})
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, capstan.NotFound("operation", op.ID)
		}
		m := recs[0].AsMap()
		if try.out != nil && str(m["step"]) == try.id {
			return try.out, nil // a try of this step committed, and its answer was lost
		}
		if have := i64(m["version"]); have != op.Version {
			return nil, capstan.StaleVersion("operation", op.ID, have, op.Version)
		}
		if err := checkFence(ctx, tx, ch.Fence); err != nil {
			return nil, err
		}
		var old capstan.Operation
		if err := json.Unmarshal([]byte(str(m["json"])), &old); err != nil {
			return nil, err
		}
		out, err := s.applyStep(ctx, tx, org, ch, stepCursor{version: op.Version, last: i64(m["last"]), created: old.CreatedAt}, try)
		if err == nil && out == nil { // cannot happen: the lock is held
			err = capstan.StaleVersion("operation", op.ID, -1, op.Version)
		}
		if err != nil {
			return nil, err
		}
		if out.writes, err = s.putChangeWrites(ctx, tx, org, ch); err != nil {
			return nil, err
		}
		out.writes.Patches, err = s.putPatches(ctx, tx, org, op.ID, ch.Patches)
		return out, err
	})
	out, _ := res.(*stepOutcome)
	return out, err
}

// applyStep runs qApplyStep for ch alone on an operation at cur, in tx;
// it returns nil when the operation is no longer at cur.
func (s *Store) applyStep(ctx context.Context, tx runner, org string, ch *capstan.OperationChange, cur stepCursor, try *stepTry) (*stepOutcome, error) {
	row, out, err := s.stepRow(ctx, org, ch, cur, try)
	if err != nil {
		return nil, err
	}
	recs, err := collect(ctx, tx, qApplyStep, map[string]any{"steps": []map[string]any{row}})
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	return out, nil
}

// stepRow is qApplyStep's row for ch on an operation at cur, and what the
// step writes when it applies.
func (s *Store) stepRow(ctx context.Context, org string, ch *capstan.OperationChange, cur stepCursor, try *stepTry) (map[string]any, *stepOutcome, error) {
	op := ch.Operation
	c := *op
	c.Meta.CreatedAt = cur.created
	s.touch(&c.Meta, org, false)
	records := ch.StampedRecords(org, s.now())
	evs, events, last, err := s.eventRows(op.ID, cur.last, ch.Events)
	if err != nil {
		return nil, nil, err
	}
	data, _ := json.Marshal(&c)
	recordRows, err := recordRows(records)
	if err != nil {
		return nil, nil, err
	}
	row := fenceParams(ch.Fence, map[string]any{"op": uid(org, op.ID), "org": org, "expected": cur.version, "prev": cur.last,
		"status": string(c.Status), "version": c.Version, "active": !c.Status.Terminal(), "last": last, "json": string(data), "open_patches": len(c.OpenPatches),
		"records": recordRows, "events": events, "step": try.id})
	out := &stepOutcome{meta: c.Meta, last: last, events: evs, records: records}
	try.out = out
	return row, out, nil
}

// lostCommitTries is how many times a step whose commit's answer was
// lost is tried again on the locked path.
const lostCommitTries = 3

// A stepTry is one ApplyOperationChange's step, through its tries: its
// id, written on the operation with it (o.step), and the outcome of its
// last try. A try whose commit's answer was lost (a connection that
// dropped after the commit) is tried again, by the driver or by the
// locked path: finding its own id on the operation, it returns that
// outcome instead of reporting the step a conflict with itself.
type stepTry struct {
	id  string
	out *stepOutcome
}

// remember keeps the cursor of an operation this store just wrote, while
// it can still change.
func (s *Store) remember(opUID string, m capstan.Meta, last int64, status capstan.OperationStatus) {
	if status.Terminal() {
		s.cursors.Delete(opUID)
		return
	}
	s.cursors.Store(opUID, stepCursor{version: m.Version, last: last, created: m.CreatedAt})
}

// recordRows are the rows that store a change's records.
func recordRows(ch *capstan.OperationChange) ([]map[string]any, error) {
	encoded, err := ch.RecordRows()
	rows := make([]map[string]any, len(encoded))
	for i, r := range encoded {
		rows[i] = map[string]any{"kind": r.Kind, "key": r.Key, "json": string(r.JSON)}
	}
	return rows, err
}
