package embedded

import (
	"fmt"
	"time"

	"github.com/capstan-dev/capstan"
)

// Flushes (memtable.go): when the active memtable holds flushAtBytes, or
// its first write is flushAfter old, the next batch freezes it and a
// flush writes it to bbolt in the background. The active memtable may
// grow to memMaxBytes while a flush runs; a batch past that waits for
// the flush, so memory stays bounded when the disk is slower than the
// steps: about twice memMaxBytes (the active and the frozen memtable)
// and one batch.
const (
	flushAtBytes = 8 << 20
	flushAfter   = 200 * time.Millisecond
	memMaxBytes  = 128 << 20 // Store.memMax

	// memItemOverhead is what the tree and the log's copy add to a write's
	// key and value, in the memtable's count of bytes.
	memItemOverhead = 64
)

// appendBuckets are the buckets whose keys mostly grow at the end; a
// flush fills their pages to appendFill.
var appendBuckets = map[string]bool{string(bEvents): true, string(bOpRecords): true}

// startMemtable publishes an empty memtable above bbolt's current
// transaction: the store's state once it is open. The caller holds
// s.wmu.
func (s *Store) startMemtable() error {
	tx, err := s.db.Begin(false)
	if err != nil {
		return err
	}
	id := tx.ID()
	if err := tx.Rollback(); err != nil {
		return err
	}
	s.active, s.activeBytes = newMemTree(), 0
	s.mem.Store(&memState{active: s.active.Copy(), txid: id})
	return nil
}

// snapshot is a consistent read: the published memtables above the bbolt
// transaction they sit on. A flush that committed and has not yet
// published is waited for.
func (s *Store) snapshot() (*rtx, error) {
	for {
		st := s.mem.Load()
		if st == nil {
			return nil, capstan.Errorf(capstan.EUNAVAILABLE, "the embedded store is not open")
		}
		tx, err := s.db.Begin(false)
		if err != nil {
			return nil, err
		}
		if tx.ID() == st.txid {
			return &rtx{mem: st.trees(), tx: tx}, nil
		}
		_ = tx.Rollback()
		s.commitMu.Lock() // the flush publishes before it lets go
		s.commitMu.Unlock()
		if err := s.stopped(); err != nil { // a flush that failed publishes nothing
			return nil, err
		}
	}
}

// applyLocked makes a logged batch's memtable the active one and
// publishes it. The caller holds s.wmu.
func (s *Store) applyLocked(work *memTree, size int) {
	if s.activeBytes == 0 {
		s.activeSince = time.Now()
	}
	s.active, s.activeBytes = work, s.activeBytes+size
	pub := work.Copy()
	s.pubMu.Lock()
	st := *s.mem.Load()
	st.active = pub
	s.mem.Store(&st)
	s.pubMu.Unlock()
}

// flushIfDueLocked starts a flush when one is due and none runs, and
// waits for the running one when the memtable is at its bound. A flush
// that failed stops the store (commitSteps). The caller holds s.wmu.
func (s *Store) flushIfDueLocked() {
	if s.flushDone != nil {
		select {
		case <-s.flushDone:
			s.flushDone = nil
		default:
			if s.activeBytes < s.memMax {
				return
			}
			if s.hooks.waitingForFlush != nil {
				s.hooks.waitingForFlush(s.activeBytes)
			}
			<-s.flushDone
			s.flushDone = nil
		}
	}
	if s.flushErr.Load() != nil || s.activeBytes == 0 || (s.activeBytes < s.flushAt && time.Since(s.activeSince) < flushAfter) {
		return
	}
	frozen := s.freezeLocked()
	done := make(chan struct{})
	s.flushDone = done
	go func() {
		defer close(done)
		if err := s.flush(frozen); err != nil {
			err = fmt.Errorf("flushing the memtable: %w", err)
			s.flushErr.Store(&err)
			var down error = capstan.Errorf(capstan.EUNAVAILABLE, "the embedded store stopped: %v; restart Capstan to recover the data directory", err)
			s.down.Store(&down)
		}
	}()
}

// flushAllLocked writes every published write to bbolt, waiting for the
// running flush: what a checkpoint needs before it syncs. The caller
// holds s.wmu.
func (s *Store) flushAllLocked() error {
	if s.mem.Load() == nil {
		return nil // opening: nothing is above bbolt yet
	}
	if s.flushDone != nil {
		<-s.flushDone
		s.flushDone = nil
	}
	if err := s.flushErr.Load(); err != nil {
		return *err
	}
	if s.active.Len() == 0 {
		return nil
	}
	return s.flush(s.freezeLocked())
}

// freezeLocked starts an empty active memtable and publishes the full one
// as frozen, which it returns. The caller holds s.wmu and no flush runs.
func (s *Store) freezeLocked() *memTree {
	frozen := s.active
	s.active, s.activeBytes = newMemTree(), 0
	pub := s.active.Copy()
	s.pubMu.Lock()
	st := *s.mem.Load()
	st.active, st.frozen = pub, frozen
	s.mem.Store(&st)
	s.pubMu.Unlock()
	return frozen
}

// flush writes a frozen memtable to bbolt in one transaction (unsynced:
// checkpoints sync) and publishes that readers find its writes there.
// It is bbolt's only writer once the store is open.
func (s *Store) flush(frozen *memTree) error {
	tx, err := s.db.Begin(true)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var failed error
	frozen.Scan(func(it memItem) bool {
		b := tx.Bucket([]byte(it.bucket))
		if b == nil {
			failed = fmt.Errorf("a write to bucket %q, which the database has not", it.bucket)
			return false
		}
		if appendBuckets[it.bucket] {
			b.FillPercent = appendFill
		}
		if it.deleted {
			failed = b.Delete(it.key)
		} else {
			failed = b.Put(it.key, it.value)
		}
		return failed == nil
	})
	if failed != nil {
		return failed
	}
	if s.hooks.beforeFlushCommit != nil {
		s.hooks.beforeFlushCommit()
	}
	id := tx.ID() // the transaction's, which readers begin at after it
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if err := tx.Commit(); err != nil {
		return err
	}
	crashPoint("flush-committed")
	s.pubMu.Lock()
	st := *s.mem.Load()
	st.frozen, st.txid = nil, id
	s.mem.Store(&st)
	s.pubMu.Unlock()
	return nil
}
