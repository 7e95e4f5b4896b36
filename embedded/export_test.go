package embedded

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	bolt "go.etcd.io/bbolt"

	"github.com/capstan-dev/capstan"
)

// rawUpdate changes the buckets themselves (as an older release left
// them), past the writer: durable by a checkpoint.
func rawUpdate(s *Store, fn func(tx *bolt.Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.flushAllLocked(); err != nil { // nothing above bbolt hides the change
		return err
	}
	if err := s.db.Update(fn); err != nil {
		return err
	}
	if err := s.startMemtable(); err != nil { // readers begin at the change
		return err
	}
	return s.fail(s.checkpointLocked())
}

// SetSchemaLevel records level as the store's schema level (0: none, as
// in a database from before levels were recorded).
func SetSchemaLevel(s *Store, level int) error {
	return rawUpdate(s, func(tx *bolt.Tx) error {
		if level == 0 {
			return tx.DeleteBucket(bMeta)
		}
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, uint64(level))
		return tx.Bucket(bMeta).Put(metaSchemaKey, v)
	})
}

// DropOperationVersions removes op_versions' entries, as in a database
// written before them.
func DropOperationVersions(s *Store) error {
	return rawUpdate(s, func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bOpVersions); err != nil {
			return err
		}
		_, err := tx.CreateBucket(bOpVersions)
		return err
	})
}

// DamageOperation overwrites an operation's stored record with bytes that
// are not JSON, for tests of what reads it.
func DamageOperation(s *Store, org, id string) error {
	return rawUpdate(s, func(tx *bolt.Tx) error {
		return tx.Bucket(bOperations).Put(key(org, id), []byte("{damaged"))
	})
}

// DropProviderIndex removes the provider index, as in a database written
// before it existed (at schema level 1).
func DropProviderIndex(s *Store) error {
	if err := SetSchemaLevel(s, 1); err != nil {
		return err
	}
	return rawUpdate(s, func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bProviderBindings); err != nil {
			return err
		}
		return tx.DeleteBucket(bPlanProviders)
	})
}

// CrashAt makes the process kill itself (SIGKILL) the nth time it
// reaches the crash point named point.
func CrashAt(point string, nth int) {
	var mu sync.Mutex
	seen := 0
	crashPoint = func(p string) {
		if p != point {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if seen++; seen == nth {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
}

// SetCheckpointEvery makes a checkpoint due after n logged batches.
func SetCheckpointEvery(n int) { checkpointEveryBatches = n }

// FlushAt makes a flush due once the memtable holds n bytes.
func FlushAt(n int) Option { return func(s *Store) { s.flushAt = n } }

// MemMax bounds the memtable at n bytes while a flush runs.
func MemMax(n int) Option { return func(s *Store) { s.memMax = n } }

// StallFlushes makes every flush wait for release before it commits, and
// tells waiting each time a batch waits for a flush, with the memtable's
// bytes.
func StallFlushes(release <-chan struct{}, waiting chan<- int) Option {
	return func(s *Store) {
		s.hooks.beforeFlushCommit = func() { <-release }
		s.hooks.waitingForFlush = func(n int) {
			select {
			case waiting <- n:
			default:
			}
		}
	}
}

// SetRotateAt makes a checkpoint start a new log past n bytes.
func SetRotateAt(n int64) { rotateAtBytes = n }

// CheckDB runs bbolt's consistency check over the whole database.
func CheckDB(s *Store) error {
	return s.db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
}

// LoseWhatWasNotSynced does to a closed data directory what a power cut
// may do: every page of the database that the last checkpoint does not
// reach, both meta pages, and the bytes after the step log's last
// record are overwritten with noise.
func LoseWhatWasNotSynced(dir string) error {
	logged, err := readStepLog(filepath.Join(dir, stepLogName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no log yet: bbolt synced every commit itself
	}
	if err != nil {
		return err
	}
	dbPath := filepath.Join(dir, "capstan.db")
	free, pages, err := freeAtCheckpoint(dbPath, logged.checkpoint)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dbPath, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	size := len(logged.checkpoint.meta)
	st, err := f.Stat()
	if err != nil {
		return err
	}
	noise := func(off int64, n int) error {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		_, err := f.WriteAt(b, off)
		return err
	}
	for _, id := range append(free, 0, 1) {
		if err := noise(int64(id)*int64(size), size); err != nil {
			return err
		}
	}
	for off := int64(pages) * int64(size); off < st.Size(); off += int64(size) {
		if err := noise(off, size); err != nil {
			return err
		}
	}
	end, err := loggedEnd(filepath.Join(dir, stepLogName))
	if err != nil {
		return err
	}
	lf, err := os.OpenFile(filepath.Join(dir, stepLogName), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer lf.Close()
	torn := make([]byte, 37)
	_, _ = rand.Read(torn)
	binary.BigEndian.PutUint32(torn, 1000) // a header that promises more than is there
	_, err = lf.WriteAt(torn, end)
	return err
}

// freeAtCheckpoint lists the pages free in the database as the
// checkpoint left it, and its high-water mark, from a copy.
func freeAtCheckpoint(dbPath string, c checkpointRecord) ([]int, int, error) {
	data, err := os.ReadFile(dbPath)
	if err != nil {
		return nil, 0, err
	}
	cp := filepath.Join(filepath.Dir(dbPath), "checkpoint-copy.db")
	defer os.Remove(cp)
	if err := os.WriteFile(cp, data, 0o600); err != nil {
		return nil, 0, err
	}
	if err := restoreCheckpoint(cp, c); err != nil {
		return nil, 0, err
	}
	db, err := bolt.Open(cp, 0o600, &bolt.Options{NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, 0, err
	}
	defer db.Close()
	var free []int
	pages := 0
	err = db.View(func(tx *bolt.Tx) error {
		pages = int(tx.Size()) / db.Info().PageSize
		for id := 2; id < pages; id++ {
			info, err := tx.Page(id)
			if err != nil {
				return err
			}
			if info != nil && info.Type == "free" {
				free = append(free, id)
			}
		}
		return nil
	})
	return free, pages, err
}

// loggedEnd is the offset after the step log's last whole record.
func loggedEnd(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	off := int64(0)
	for off+stepLogHeaderBytes <= int64(len(data)) {
		n := int64(binary.BigEndian.Uint32(data[off:]))
		if n == 0 || off+stepLogHeaderBytes+n > int64(len(data)) {
			break
		}
		off += stepLogHeaderBytes + n
	}
	return off, nil
}

// BreakStepLog closes the step log's file under the store, so that the
// next append fails as a full or failed disk's would.
func BreakStepLog(s *Store) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.log.f.Close()
}

// PanicInAStep commits a step whose write panics inside the group
// commit, as a step's code that is wrong would.
func PanicInAStep(ctx context.Context, s *Store, op *capstan.Operation) error {
	return s.update(ctx, "test", func(w *writer) error {
		if err := w.put(bOperations, key("acme", op.ID), []byte("{}")); err != nil {
			return err
		}
		panic("a step's write went wrong")
	})
}

// CheckpointNow runs a checkpoint and returns the pages the database
// holds at it that it reaches (every page below its high-water mark that
// is not free), each with its bytes as synced.
func CheckpointNow(s *Store) (map[int][]byte, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkpointLocked(); err != nil {
		return nil, err
	}
	logged, err := readStepLog(filepath.Join(s.dir, stepLogName))
	if err != nil {
		return nil, err
	}
	dbPath := filepath.Join(s.dir, "capstan.db")
	free, pages, err := freeAtCheckpoint(dbPath, logged.checkpoint)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(dbPath)
	if err != nil {
		return nil, err
	}
	size := len(logged.checkpoint.meta)
	isFree := map[int]bool{}
	for _, id := range free {
		isFree[id] = true
	}
	reached := map[int][]byte{}
	for id := 2; id < pages; id++ {
		if !isFree[id] {
			reached[id] = bytes.Clone(data[id*size : (id+1)*size])
		}
	}
	return reached, nil
}

// PagesNow reads the database's pages ids as they are in its file now.
func PagesNow(s *Store, ids map[int][]byte) (map[int][]byte, error) {
	data, err := os.ReadFile(filepath.Join(s.dir, "capstan.db"))
	if err != nil {
		return nil, err
	}
	size := s.db.Info().PageSize
	now := map[int][]byte{}
	for id := range ids {
		now[id] = data[id*size : (id+1)*size]
	}
	return now, nil
}

// CloseWithoutCheckpoint closes the store as a kill would leave it: what
// was logged since the last checkpoint is in the log alone.
func CloseWithoutCheckpoint(s *Store) {
	s.wmu.Lock()
	s.closing = true
	close(s.checkpointWanted)
	s.wmu.Unlock()
	<-s.checkpointerDone
	s.closeFiles()
}

// TearTheLogTail writes, after the log's last record, the header of a
// record of size bytes that the file does not hold.
func TearTheLogTail(dir string, size uint32) error {
	path := filepath.Join(dir, stepLogName)
	end, err := loggedEnd(path)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	header := binary.BigEndian.AppendUint32(nil, size)
	_, err = f.WriteAt(append(header, 1, 2, 3, 4), end)
	return err
}
