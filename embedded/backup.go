package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/capstan-dev/capstan"
)

var (
	_ capstan.Dumper   = (*Store)(nil)
	_ capstan.Restorer = (*Store)(nil)
)

// Dump writes org's records from one read transaction: a consistent
// snapshot that writers do not wait for.
func (s *Store) Dump(ctx context.Context, org string, emit func(capstan.BackupRecord) error) error {
	if err := capstan.CheckOrg(org); err != nil {
		return err
	}
	return s.view(ctx, "embedded.Dump", func(tx *rtx) error {
		if err := dumpPacks(tx, org, emit); err != nil {
			return err
		}
		for _, b := range []struct {
			bucket []byte
			kind   string
		}{{bResources, capstan.BackupResource}, {bIntents, capstan.BackupIntent}, {bPlans, capstan.BackupPlan},
			{bRevisions, capstan.BackupPlanRevision}, {bOperations, capstan.BackupOperation}} {
			if err := dumpBucket(ctx, tx, b.bucket, org, b.kind, emit); err != nil {
				return err
			}
		}
		for _, rk := range capstan.RecordKinds {
			if err := dumpRecords(ctx, tx, org, rk.Stored, rk.Backup, emit); err != nil {
				return err
			}
		}
		if err := dumpEvents(ctx, tx, org, emit); err != nil {
			return err
		}
		return dumpBucket(ctx, tx, bPatches, org, capstan.BackupPlanPatch, emit)
	})
}

// dumpPacks writes the packs in the order they were installed: which
// pack owns a capability both define depends on it.
func dumpPacks(tx *rtx, org string, emit func(capstan.BackupRecord) error) error {
	type stored struct {
		data []byte
		pack capstan.ScenarioPack
	}
	var packs []stored
	err := scan(tx.Bucket(bPacks), prefix(org), nil, func(_, v []byte) (bool, error) {
		p := stored{data: bytes.Clone(v)}
		packs = append(packs, p)
		return true, json.Unmarshal(v, &packs[len(packs)-1].pack)
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(packs, func(a, b stored) int { return a.pack.InstalledAt.Compare(b.pack.InstalledAt) })
	for _, p := range packs {
		if err := emit(capstan.BackupRecord{Kind: capstan.BackupPack, Data: p.data}); err != nil {
			return err
		}
	}
	return nil
}

func dumpBucket(ctx context.Context, tx *rtx, bucket []byte, org, kind string, emit func(capstan.BackupRecord) error) error {
	return scan(tx.Bucket(bucket), prefix(org), nil, func(_, v []byte) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		return true, emit(capstan.BackupRecord{Kind: kind, Data: bytes.Clone(v)})
	})
}

// dumpRecords writes one kind of every operation's records: keys are
// org, operation, kind, key.
func dumpRecords(ctx context.Context, tx *rtx, org, stored, kind string, emit func(capstan.BackupRecord) error) error {
	p := prefix(org)
	return scan(tx.Bucket(bOpRecords), p, nil, func(k, v []byte) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		parts := bytes.SplitN(k[len(p):], []byte{0}, 3)
		if len(parts) != 3 || string(parts[1]) != stored {
			return true, nil
		}
		return true, emit(capstan.BackupRecord{Kind: kind, Operation: string(parts[0]), Key: string(parts[2]), Data: bytes.Clone(v)})
	})
}

func dumpEvents(ctx context.Context, tx *rtx, org string, emit func(capstan.BackupRecord) error) error {
	p := prefix(org)
	return scan(tx.Bucket(bEvents), p, nil, func(k, v []byte) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		parts := bytes.SplitN(k[len(p):], []byte{0}, 2)
		if len(parts) != 2 {
			return true, nil
		}
		seq, err := strconv.ParseInt(string(parts[1]), 16, 64)
		if err != nil {
			return false, err
		}
		return true, emit(capstan.BackupRecord{Kind: capstan.BackupEvent, Operation: string(parts[0]), Key: strconv.FormatInt(seq, 10), Data: bytes.Clone(v)})
	})
}

// BeginRestore starts loading org's records; the store must hold nothing
// of org (ECONFLICT).
func (s *Store) BeginRestore(ctx context.Context, org string) (capstan.Restoration, error) {
	if err := capstan.CheckOrg(org); err != nil {
		return nil, err
	}
	err := s.view(ctx, "embedded.BeginRestore", func(tx *rtx) error {
		for _, b := range allBuckets {
			if k, _ := tx.Bucket(b).Cursor().Seek(prefix(org)); k != nil && bytes.HasPrefix(k, prefix(org)) {
				return capstan.Errorf(capstan.ECONFLICT, "the store already holds organization %s: a backup restores into a store without it", org)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &restoration{s: s, org: org}, nil
}

type restoration struct {
	s   *Store
	org string
}

// Write stores a batch in one transaction, each record as it was, with
// what this store derives from it.
func (r *restoration) Write(ctx context.Context, batch []capstan.BackupRecord) error {
	defer r.s.cache.invalidate(r.org)
	return r.s.update(ctx, "embedded.Restore", func(w *writer) error {
		for _, rec := range batch {
			if err := r.put(w, rec); err != nil {
				if capstan.ErrorCode(err) == capstan.ECONFLICT {
					return err
				}
				return capstan.Errorf(capstan.EINVALID, "backup record %s %s: %v", rec.Kind, rec.Key, err)
			}
		}
		return nil
	})
}

func (r *restoration) put(w *writer, rec capstan.BackupRecord) error {
	tx, org := w.tx, r.org
	if !json.Valid(rec.Data) {
		return capstan.Errorf(capstan.EINVALID, "its data is not JSON")
	}
	switch rec.Kind {
	case capstan.BackupPack:
		var p capstan.ScenarioPack
		if err := json.Unmarshal(rec.Data, &p); err != nil {
			return err
		}
		var created bool
		if err := r.s.writePack(w, org, &p, &created); err != nil {
			return err
		}
		return w.put(bPacks, key(org, p.Ref()), rec.Data) // as installed, with its time
	case capstan.BackupResource:
		var res capstan.Resource
		if err := json.Unmarshal(rec.Data, &res); err != nil {
			return err
		}
		return writeResource(w, org, nil, &res)
	case capstan.BackupIntent:
		var m capstan.Meta
		if err := json.Unmarshal(rec.Data, &m); err != nil {
			return err
		}
		return w.put(bIntents, key(org, m.ID), rec.Data)
	case capstan.BackupPlan:
		var p capstan.Plan
		if err := json.Unmarshal(rec.Data, &p); err != nil {
			return err
		}
		if err := w.put(bIntentPlans, key(org, p.IntentID, p.ID), nil); err != nil {
			return err
		}
		if err := indexProviders(w, org, &p); err != nil {
			return err
		}
		return w.put(bPlans, key(org, p.ID), rec.Data)
	case capstan.BackupPlanRevision:
		var rev struct {
			PlanID   string `json:"plan_id"`
			Revision int    `json:"revision"`
		}
		if err := json.Unmarshal(rec.Data, &rev); err != nil {
			return err
		}
		return w.put(bRevisions, revisionKey(org, rev.PlanID, rev.Revision), rec.Data)
	case capstan.BackupOperation:
		var op capstan.Operation
		if err := json.Unmarshal(rec.Data, &op); err != nil {
			return err
		}
		if tx.Bucket(bOperations).Get(key(org, op.ID)) != nil {
			return capstan.Errorf(capstan.ECONFLICT, "operation %s appears twice", op.ID)
		}
		if op.IdempotencyKey != "" {
			if tx.Bucket(bOperationKeys).Get(key(org, op.IdempotencyKey)) != nil {
				return capstan.Errorf(capstan.ECONFLICT, "two operations were started with idempotency key %s", op.IdempotencyKey)
			}
			if err := w.put(bOperationKeys, key(org, op.IdempotencyKey), []byte(op.ID)); err != nil {
				return err
			}
		}
		return r.s.putOperationJSON(w, org, &op, rec.Data)
	case capstan.BackupEvent:
		seq, err := strconv.ParseInt(rec.Key, 10, 64)
		if err != nil {
			return err
		}
		return w.put(bEvents, key(org, rec.Operation, seqKey(seq)), rec.Data)
	case capstan.BackupPlanPatch:
		var p capstan.PlanPatch
		if err := json.Unmarshal(rec.Data, &p); err != nil {
			return err
		}
		if err := w.put(bOpPatches, key(org, p.OperationID, p.ID), []byte{}); err != nil {
			return err
		}
		return w.put(bPatches, key(org, p.ID), rec.Data)
	}
	if stored, ok := capstan.StoredKindOf(rec.Kind); ok {
		return w.put(bOpRecords, key(org, rec.Operation, stored, rec.Key), rec.Data)
	}
	return capstan.Errorf(capstan.EINVALID, "this store does not keep records of kind %q", rec.Kind)
}

// Finish has nothing left to build: every record's indexes were written
// with it.
func (r *restoration) Finish(ctx context.Context) error { return nil }

// Abort removes everything of the organization.
func (r *restoration) Abort(ctx context.Context) error {
	defer r.s.cache.invalidate(r.org)
	p := prefix(r.org)
	return r.s.update(ctx, "embedded.AbortRestore", func(w *writer) error {
		for _, name := range append(slices.Clone(allBuckets), bProviderBindings, bPlanProviders) {
			b := w.tx.Bucket(name)
			var keys [][]byte
			if err := scan(b, p, nil, func(k, _ []byte) (bool, error) {
				keys = append(keys, bytes.Clone(k))
				return true, nil
			}); err != nil {
				return err
			}
			for _, k := range keys {
				if err := w.delete(name, k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
