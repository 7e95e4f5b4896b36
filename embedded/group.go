package embedded

import (
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/groupcommit"
)

// Group commit across operations. Steps of different operations that
// become ready while a commit is on disk wait for it and then commit
// together, through internal/groupcommit: one transaction and one append
// to the step log (one fdatasync) for all of them; no added delay for a
// step that finds no commit running (a lone chain is not slowed).

// writeFunc is one write's work in a transaction: a step's, or any
// other write's (every write of the store goes through the group).
type writeFunc = func(w *writer) error

// writer is the only way the store writes to a bucket: it puts a write's
// changes in the batch's memtable (memtable.go) and keeps them for the
// step log, so that every write is made durable by one append
// (TestEveryWriteGoesThroughTheWriter keeps the store's code to it). tx
// is for reads, the batch's own writes first. A migration's writer
// writes to bbolt's transaction (raw) instead: the checkpoint after it
// makes it durable.
type writer struct {
	tx   *rtx
	mem  *memTree
	raw  *bolt.Tx
	ops  []logOp
	size int
}

// rawWriter writes to tx directly: for migrations.
func rawWriter(tx *bolt.Tx) *writer { return &writer{tx: &rtx{tx: tx}, raw: tx} }

func (w *writer) put(bucket, k, v []byte) error {
	if err := checkWrite(bucket, k, v); err != nil {
		return err
	}
	if w.raw != nil {
		b := w.raw.Bucket(bucket)
		if b == nil {
			return fmt.Errorf("no bucket %q", bucket)
		}
		return b.Put(k, v)
	}
	w.mem.Set(memItem{bucket: string(bucket), key: k, value: v})
	w.ops = append(w.ops, logOp{bucket: bucket, key: k, value: v})
	w.size += len(k) + len(v) + memItemOverhead
	return nil
}

func (w *writer) delete(bucket, k []byte) error {
	if err := checkWrite(bucket, k, nil); err != nil {
		return err
	}
	if w.raw != nil {
		b := w.raw.Bucket(bucket)
		if b == nil {
			return fmt.Errorf("no bucket %q", bucket)
		}
		return b.Delete(k)
	}
	w.mem.Set(memItem{bucket: string(bucket), key: k, deleted: true})
	w.ops = append(w.ops, logOp{bucket: bucket, key: k, del: true})
	w.size += len(k) + memItemOverhead
	return nil
}

// checkWrite refuses, before it is logged, a write bbolt would refuse in
// the flush: the step fails alone, instead of a logged write stopping
// the store at its flush and at every replay after.
func checkWrite(bucket, k, v []byte) error {
	switch {
	case !knownBuckets[string(bucket)]:
		return fmt.Errorf("a write to bucket %q, which the store does not keep", bucket)
	case len(k) == 0:
		return capstan.Errorf(capstan.EINVALID, "an empty key")
	case len(k) > bolt.MaxKeySize:
		return capstan.Errorf(capstan.EINVALID, "a key of %d bytes is past the embedded store's %d", len(k), bolt.MaxKeySize)
	case len(v) > bolt.MaxValueSize:
		return capstan.Errorf(capstan.EINVALID, "a value of %d bytes is past the embedded store's %d", len(v), bolt.MaxValueSize)
	}
	return nil
}

// putJSON puts v, encoded as JSON.
func (w *writer) putJSON(bucket, k []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.put(bucket, k, data)
}

// update runs fn in a write transaction shared with the writes (the
// steps of other operations) that wait at the same moment.
func (s *Store) update(ctx context.Context, op string, fn writeFunc) error {
	if err := ctx.Err(); err != nil {
		return capstan.Errorf(capstan.EUNAVAILABLE, "%s: %v", op, err)
	}
	c := s.group.Commit(ctx, fn, nil, s.commitSteps, func(err error) error {
		return capstan.Errorf(capstan.EUNAVAILABLE, "%s: %v", op, err)
	})
	return wrap(op, c.Err)
}

// commitSteps commits the steps as one batch: one append to the step
// log, then one publication of their memtable. A step that fails fails
// alone: the batch's copy of the memtable is dropped and the others
// commit again without it; most failures (a stale version) are found
// before the step writes anything, so this is rare.
func (s *Store) commitSteps(batch []*groupcommit.Call[writeFunc]) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.flushErr.Load(); err != nil && s.failed == nil {
		_ = s.fail(*err)
	}
	for len(batch) > 0 {
		if s.failed != nil {
			for _, c := range batch {
				c.Err = s.stopped()
			}
			return
		}
		failed, failure, err := s.commitBatch(batch)
		if failed < 0 {
			for _, c := range batch {
				c.Err = err // nil, or the commit's own failure: every step's
			}
			return
		}
		batch[failed].Err = failure
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}

// commitBatch runs the writes into a copy of the active memtable, makes
// them durable (by the step log, or by a checkpoint when they are too
// large for it) and only then publishes them to readers. It
// returns the index of a step that failed (then nothing is committed),
// or -1 and the commit's outcome.
func (s *Store) commitBatch(batch []*groupcommit.Call[writeFunc]) (int, error, error) {
	r, err := s.snapshot()
	if err != nil {
		return -1, nil, err
	}
	defer r.tx.Rollback()
	// The batch writes to a copy of the active memtable (copied on
	// write): a step that fails leaves the active one as it was.
	work := s.active.Copy()
	w := &writer{mem: work, tx: &rtx{mem: append([]*memTree{work}, r.mem[1:]...), tx: r.tx}}
	for i, c := range batch {
		if err := c.Item(w); err != nil {
			return i, err, nil
		}
	}
	payload := encodeSteps(w.ops)
	if len(payload) > maxStepLogRecord { // made durable by a checkpoint instead
		s.applyLocked(work, w.size)
		return -1, nil, s.fail(s.checkpointLocked())
	}
	if err := s.log.append(payload); err != nil {
		// The record may have reached the disk (a sync that failed after
		// its write), so the steps' outcome is unknown until a restart.
		return -1, nil, s.fail(fmt.Errorf("the step log (whether the last steps were kept is known after a restart): %w", err))
	}
	crashPoint("step-logged")
	s.applyLocked(work, w.size)
	crashPoint("step-applied")
	s.batchesSinceCheckpoint++
	if s.checkpointDue() && !s.closing {
		select {
		case s.checkpointWanted <- struct{}{}:
		default:
		}
	}
	s.flushIfDueLocked()
	return -1, nil, nil
}

// fail stops the store after err (nil: nothing happened): a write it
// could not make durable may be visible in the database and gone after a
// restart, so from here every call, reads included, answers UNAVAILABLE
// until the process restarts and recovery says what was kept. The
// caller holds s.wmu.
func (s *Store) fail(err error) error {
	if err == nil {
		return nil
	}
	s.failed = err
	var down error = capstan.Errorf(capstan.EUNAVAILABLE, "the embedded store stopped: %v; restart Capstan to recover the data directory", err)
	s.down.Store(&down)
	return down
}

// stopped is the answer to every call once the store failed.
func (s *Store) stopped() error {
	if down := s.down.Load(); down != nil {
		return *down
	}
	return nil
}

// GroupCommits counts the batches that committed operation steps
// (several steps each when they came at once): one log append each.
func (s *Store) GroupCommits() int64 { return s.group.Commits() }

// PageWrites counts the page writes of every bbolt transaction the store
// committed (bbolt's own count): the flushes' pages, which checkpoints
// sync.
func (s *Store) PageWrites() int64 {
	st := s.db.Stats()
	return st.TxStats.GetWrite()
}
