package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/capstan-dev/capstan"
)

func seqKey(n int64) string { return fmt.Sprintf("%016x", n) }

// StartOperation stores a new operation with its frozen plan and first
// events. This store keeps no leases (one process owns it), so a fence
// is not checked here, as a step's is not.
func (s *Store) StartOperation(ctx context.Context, org string, op *capstan.Operation, plan *capstan.Plan, in *capstan.Intent, events []capstan.OperationEvent, fence *capstan.Fence) error {
	if err := capstan.CheckOrg(org); err != nil {
		return err
	}
	if err := capstan.CheckStart(op, plan, in); err != nil {
		return err
	}
	var pm, im, om capstan.Meta
	err := s.update(ctx, "embedded.StartOperation", func(w *writer) (err error) {
		tx := w.tx
		if op.IdempotencyKey != "" && tx.Bucket(bOperationKeys).Get(key(org, op.IdempotencyKey)) != nil {
			return capstan.Errorf(capstan.ECONFLICT, "an operation was already started with idempotency key %s", op.IdempotencyKey)
		}
		if pm, err = s.putPlan(w, org, plan); err != nil {
			return err
		}
		if in != nil {
			if im, err = s.putIntent(w, org, in); err != nil {
				return err
			}
		}
		om = op.Meta
		s.touch(&om, org, true)
		o2 := *op
		o2.Meta = om
		if err := s.putOperation(w, org, &o2); err != nil {
			return err
		}
		if op.IdempotencyKey != "" {
			if err := w.put(bOperationKeys, key(org, op.IdempotencyKey), []byte(om.ID)); err != nil {
				return err
			}
		}
		return s.appendEvents(w, org, om.ID, events)
	})
	if err != nil {
		return err
	}
	op.Meta, plan.Meta = om, pm
	if in != nil {
		in.Meta = im
	}
	return nil
}

// putOperation writes op and keeps the index of unfinished operations.
func (s *Store) putOperation(w *writer, org string, op *capstan.Operation) error {
	data, err := json.Marshal(op)
	if err != nil {
		return err
	}
	return s.putOperationJSON(w, org, op, data)
}

// putOperationJSON writes op, encoded as data, its version for the next
// step's check, and keeps the index of unfinished operations.
func (s *Store) putOperationJSON(w *writer, org string, op *capstan.Operation, data []byte) error {
	k := key(org, op.ID)
	if err := putVersion(w, org, op.Meta); err != nil {
		return err
	}
	active := w.tx.Bucket(bActiveOps)
	// Only a change of the set is written: a put of a key that is there
	// already still makes bbolt materialise and re-serialise the set in
	// the commit (measured: 7-15 % of a chain step).
	found, _ := active.Cursor().Seek(k) // Get cannot tell an empty value from none
	switch listed := bytes.Equal(found, k); {
	case op.Status.Terminal() && listed:
		if err := w.delete(bActiveOps, k); err != nil {
			return err
		}
	case !op.Status.Terminal() && !listed:
		if err := w.put(bActiveOps, k, []byte{}); err != nil {
			return err
		}
	}
	return w.put(bOperations, k, data)
}

// appendFill is how full bbolt leaves pages it splits in the buckets an
// operation's steps write to. Their keys mostly grow at the end (events
// by sequence, evidence by time-sorted id, node runs of a layer next to
// the layer before), so bbolt's default of half-full pages only doubles
// the pages, and the B+tree levels above them, that every commit writes:
// measured on a 10,000-node DAG (BenchmarkExecutor's writes/commit),
// 16.5 -> 14.8 page writes per chain step and 27.6 -> 21.0 per layered
// step. The time per step moved less than the writes: the commit's cost
// is mostly its two syncs, not how many pages they carry.
const appendFill = 0.95

// appendEvents gives events the next sequence numbers of the operation.
func (s *Store) appendEvents(w *writer, org, opID string, events []capstan.OperationEvent) error {
	last := lastSequence(w.tx.Bucket(bEvents), org, opID)
	now := s.now().UTC()
	for i := range events {
		e := events[i]
		last++
		e.OperationID, e.Sequence = opID, last
		if e.At.IsZero() {
			e.At = now
		}
		data, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if err := w.put(bEvents, key(org, opID, seqKey(last)), data); err != nil {
			return err
		}
		events[i] = e
	}
	return nil
}

// lastSequence is the operation's last event's sequence (0: none).
func lastSequence(b *rbucket, org, opID string) int64 {
	last := int64(0)
	p := prefix(org, opID)
	c := b.Cursor()
	if k, _ := c.Seek(append(append([]byte(nil), p...), 0xff)); k != nil {
		if k2, _ := c.Prev(); k2 != nil && len(k2) > len(p) && string(k2[:len(p)]) == string(p) {
			fmt.Sscanf(string(k2[len(p):]), "%x", &last)
		}
	} else if k2, _ := c.Last(); k2 != nil && len(k2) > len(p) && string(k2[:len(p)]) == string(p) {
		fmt.Sscanf(string(k2[len(p):]), "%x", &last)
	}
	return last
}

// ApplyOperationChange commits one step of an operation.
func (s *Store) ApplyOperationChange(ctx context.Context, org string, ch *capstan.OperationChange) error {
	if err := capstan.CheckStep(org, ch); err != nil {
		return err
	}
	op := ch.Operation
	if len(ch.Resources) > 0 {
		defer s.cache.invalidate(org)
	}
	prep, err := s.prepareStep(org, ch)
	if err != nil {
		return capstan.Wrap("embedded.ApplyOperationChange", err)
	}
	var written capstan.ChangeMetas
	var events []capstan.OperationEvent
	err = s.update(ctx, "embedded.ApplyOperationChange", func(w *writer) error {
		version, created, ok, err := storedVersion(w.tx, org, op.ID)
		if err != nil {
			return err
		}
		if !ok {
			return capstan.NotFound("operation", op.ID)
		}
		if version != op.Version {
			return capstan.StaleVersion("operation", op.ID, version, op.Version)
		}
		o2 := *op
		o2.Meta = prep.meta
		if !created.Equal(o2.CreatedAt) { // the caller's copy lost its creation time: keep the stored one
			o2.CreatedAt = created
			if prep.opJSON, err = json.Marshal(&o2); err != nil {
				return err
			}
			prep.meta.CreatedAt = created
		}
		if events, err = s.putPrepared(w, org, op, prep, &o2); err != nil {
			return err
		}
		metas, err := s.putChangeWrites(w, org, ch)
		if err != nil {
			return err
		}
		metas.Patches, err = s.putPatches(w, org, op.ID, ch.Patches)
		written = metas
		return err
	})
	if err != nil {
		return err
	}
	op.Meta = prep.meta
	copy(ch.Events, events)
	ch.NodeRuns, ch.Gates, ch.Evidence, ch.Artifacts, ch.Interventions = prep.records.NodeRuns, prep.records.Gates, prep.records.Evidence, prep.records.Artifacts, prep.records.Interventions
	written.Apply(ch)
	return nil
}

// putPatches creates (no id) or updates (at its current version) each
// patch and returns their new Meta; the patches are left as they were
// until the commit succeeds.
func (s *Store) putPatches(w *writer, org, opID string, patches []capstan.PlanPatch) ([]capstan.Meta, error) {
	tx := w.tx
	out := make([]capstan.Meta, len(patches))
	for i := range patches {
		p := patches[i]
		created := p.Version == 0
		if created && p.ID != "" && tx.Bucket(bPatches).Get(key(org, p.ID)) != nil {
			return nil, capstan.StaleVersion("plan patch", p.ID, -1, 0) // it exists: a create is a write from no version
		}
		if !created {
			var old capstan.PlanPatch
			ok, err := getJSON(tx.Bucket(bPatches), key(org, p.ID), &old)
			if err != nil {
				return nil, err
			}
			if !ok || old.OperationID != opID {
				return nil, capstan.NotFound("plan patch", p.ID)
			}
			if old.Version != p.Version {
				return nil, capstan.StaleVersion("plan patch", p.ID, old.Version, p.Version)
			}
			p.CreatedAt = old.CreatedAt
		}
		s.touch(&p.Meta, org, created)
		if err := w.putJSON(bPatches, key(org, p.ID), &p); err != nil {
			return nil, err
		}
		if err := w.put(bOpPatches, key(org, opID, p.ID), []byte{}); err != nil {
			return nil, err
		}
		out[i] = p.Meta
	}
	return out, nil
}

// GetPlanPatch returns a patch by id.
func (s *Store) GetPlanPatch(ctx context.Context, org, id string) (*capstan.PlanPatch, error) {
	var p capstan.PlanPatch
	var ok bool
	err := s.view(ctx, "embedded.GetPlanPatch", func(tx *rtx) (err error) {
		ok, err = getJSON(tx.Bucket(bPatches), key(org, id), &p)
		return err
	})
	if err == nil && !ok {
		err = capstan.NotFound("plan patch", id)
	}
	return &p, err
}

// ListPlanPatches returns an operation's patches, oldest first (ids sort by time).
func (s *Store) ListPlanPatches(ctx context.Context, org, opID string) ([]*capstan.PlanPatch, error) {
	out := []*capstan.PlanPatch{}
	err := s.view(ctx, "embedded.ListPlanPatches", func(tx *rtx) error {
		return scan(tx.Bucket(bOpPatches), prefix(org, opID), nil, func(k, _ []byte) (bool, error) {
			var p capstan.PlanPatch
			ok, err := getJSON(tx.Bucket(bPatches), key(org, lastPart(k)), &p)
			if ok {
				out = append(out, &p)
			}
			return err == nil, err
		})
	})
	return out, err
}

// putChangeWrites writes the intent, plan and resources a change carries.
func (s *Store) putChangeWrites(wr *writer, org string, ch *capstan.OperationChange) (w capstan.ChangeMetas, err error) {
	if ch.Intent != nil {
		if w.Intent, err = s.putIntent(wr, org, ch.Intent); err != nil {
			return w, err
		}
	}
	if ch.Plan != nil {
		if w.Plan, err = s.putPlan(wr, org, ch.Plan); err != nil {
			return w, err
		}
	}
	for _, r := range ch.Resources { // in order: a created resource may be a later one's target
		var m capstan.Meta
		if r.ID == "" {
			m, err = s.createResource(wr, org, r)
		} else {
			m, err = s.updateResource(wr, org, r)
		}
		if err != nil {
			return w, err
		}
		w.Resources = append(w.Resources, m)
	}
	return w, nil
}

// GetOperation returns an operation by id.
func (s *Store) GetOperation(ctx context.Context, org, id string) (*capstan.Operation, error) {
	var op capstan.Operation
	var ok bool
	err := s.view(ctx, "embedded.GetOperation", func(tx *rtx) (err error) {
		ok, err = getJSON(tx.Bucket(bOperations), key(org, id), &op)
		return err
	})
	if err == nil && !ok {
		err = capstan.NotFound("operation", id)
	}
	return &op, err
}

// GetOperationByKey returns the operation started with an idempotency key.
func (s *Store) GetOperationByKey(ctx context.Context, org, idem string) (*capstan.Operation, error) {
	var id []byte
	_ = s.view(ctx, "embedded.GetOperationByKey", func(tx *rtx) error {
		id = append(id, tx.Bucket(bOperationKeys).Get(key(org, idem))...)
		return nil
	})
	if len(id) == 0 {
		return nil, capstan.NotFound("operation with idempotency key", idem)
	}
	return s.GetOperation(ctx, org, string(id))
}

// ListOperations returns a page of operations ordered by id.
func (s *Store) ListOperations(ctx context.Context, org string, f capstan.OperationFilter) ([]*capstan.Operation, int, error) {
	var out []*capstan.Operation
	total := 0
	limit := capstan.LimitOr(f.Limit, 100)
	err := s.view(ctx, "embedded.ListOperations", func(tx *rtx) error {
		return scan(tx.Bucket(bOperations), prefix(org), nil, func(_, v []byte) (bool, error) {
			var op capstan.Operation
			if err := json.Unmarshal(v, &op); err != nil {
				return false, err
			}
			if !f.Matches(&op) {
				return true, nil
			}
			total++
			if (f.After == "" || op.ID > f.After) && len(out) < limit {
				out = append(out, &op)
			}
			return true, nil
		})
	})
	return out, total, err
}

// OperationRecords returns what an operation produced.
func (s *Store) OperationRecords(ctx context.Context, org, opID string, kinds ...string) (*capstan.OperationRecords, error) {
	kinds, err := capstan.SelectRecordKinds(kinds)
	if err != nil {
		return nil, err
	}
	recs := &capstan.OperationRecords{}
	err = s.view(ctx, "embedded.OperationRecords", func(tx *rtx) error {
		if tx.Bucket(bOperations).Get(key(org, opID)) == nil {
			return capstan.NotFound("operation", opID)
		}
		for _, kind := range kinds { // a kind's records are together: org, operation, kind, key
			err := scan(tx.Bucket(bOpRecords), prefix(org, opID, kind), nil, func(_, v []byte) (bool, error) {
				err := recs.Add(kind, v)
				return err == nil, err
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

func appendJSON[T any](v []byte, list *[]T) error {
	var t T
	if err := json.Unmarshal(v, &t); err != nil {
		return err
	}
	*list = append(*list, t)
	return nil
}

// ListEvents returns events of an operation after a sequence number.
func (s *Store) ListEvents(ctx context.Context, org, opID string, after int64, limit int) ([]capstan.OperationEvent, error) {
	var out []capstan.OperationEvent
	limit = capstan.LimitOr(limit, 1000)
	err := s.view(ctx, "embedded.ListEvents", func(tx *rtx) error {
		if tx.Bucket(bOperations).Get(key(org, opID)) == nil {
			return capstan.NotFound("operation", opID)
		}
		return scan(tx.Bucket(bEvents), prefix(org, opID), key(org, opID, seqKey(after)), func(_, v []byte) (bool, error) {
			if err := appendJSON(v, &out); err != nil {
				return false, err
			}
			return len(out) < limit, nil
		})
	})
	return out, err
}

// UnfinishedOperations lists every operation not in a terminal status,
// from the keys of the set of active operations (organization, id).
func (s *Store) UnfinishedOperations(ctx context.Context) ([]capstan.OperationRef, error) {
	var out []capstan.OperationRef
	err := s.view(ctx, "embedded.UnfinishedOperations", func(tx *rtx) error {
		return tx.Bucket(bActiveOps).ForEach(func(k, _ []byte) error {
			org, id, ok := bytes.Cut(k, []byte{0})
			if !ok || len(org) == 0 || len(id) == 0 {
				return capstan.Errorf(capstan.EINTERNAL, "active operation key %q is not organization and id", k)
			}
			out = append(out, capstan.OperationRef{OrganizationID: string(org), ID: string(id)})
			return nil
		})
	})
	return out, err
}
