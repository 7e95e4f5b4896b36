package embedded

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"

	"github.com/capstan-dev/capstan"
)

// Checkpoints. bbolt commits with NoSync: a commit writes its pages to
// the file (the page cache) and its meta page, and syncs nothing. What
// makes that safe:
//
//   - A checkpoint syncs the file (one fdatasync), opens a read
//     transaction at that commit and logs the commit's meta page. The
//     read transaction is held until the next checkpoint: bbolt reuses no
//     page a reader can still see, so every page the checkpoint's meta
//     page reaches stays as it was synced, whatever is committed after.
//   - Recovery writes the last checkpoint's meta page into both of
//     bbolt's meta slots, which makes the database exactly the synced
//     one (bbolt rebuilds its freelist from the pages the meta reaches,
//     NoFreelistSync), then replays the steps logged after it.
//
// Whatever the disk kept of the unsynced commits (a kill -9 keeps them
// all in the page cache; a power cut some, torn) is thus never read.

// crashPoint marks the instants the crash sweep kills the process at
// (TestACrashAtEveryInstantOfACommit); it does nothing otherwise.
var crashPoint = func(string) {}

// checkpointEveryBatches (a variable for the crash sweep) and
// checkpointEveryBytes say how many logged batches of steps, or log
// bytes, make the next checkpoint due: the bound on what recovery
// replays and on the pages the pinned reader keeps from reuse.
var checkpointEveryBatches = 2048

// rotateAtBytes is the log's size past which a checkpoint starts a new
// log (a variable for the crash sweep).
var rotateAtBytes int64 = 64 << 20

const (
	checkpointEveryBytes = 32 << 20

	// mmapBytes is bbolt's map of the file, set large once: a commit that
	// outgrew the map would remap it, which waits for every reader, the
	// pinned one included, for ever. The file cannot outgrow it (MaxSize).
	mmapBytes = 64 << 30
	maxBytes  = mmapBytes - 1<<30
)

// metaOffset and txidOffset place a meta page's fields: the page header
// (16 bytes) then magic, version, page size, flags, root (16), freelist,
// high-water page id, txid.
const (
	metaPageIDOffset   = 0
	metaPageSizeOffset = 16 + 8
	metaRootOffset     = 16 + 16
	metaPagesOffset    = 16 + 40
	metaTxidOffset     = 16 + 48
)

// checkpointLocked makes every commit so far durable and records it in
// the log: the memtables are flushed first. The caller holds s.wmu.
func (s *Store) checkpointLocked() error {
	if err := s.flushAllLocked(); err != nil {
		return err
	}
	if err := s.db.Sync(); err != nil {
		return err
	}
	crashPoint("checkpoint-synced")
	rtx, err := s.db.Begin(false)
	if err != nil {
		return err
	}
	meta, err := s.readMetaPage(uint64(rtx.ID()))
	if err != nil {
		rtx.Rollback()
		return err
	}
	root, err := rootCRC(s.file, meta)
	if err != nil {
		rtx.Rollback()
		return err
	}
	c := checkpointRecord{txid: uint64(rtx.ID()), meta: meta, rootCRC: root}
	if s.log == nil || s.log.size >= rotateAtBytes {
		l, err := startStepLog(s.dir, c)
		if err != nil {
			rtx.Rollback()
			return err
		}
		s.log.close()
		s.log = l
	} else if err := s.log.append(encodeCheckpoint(c)); err != nil {
		rtx.Rollback()
		return err
	}
	crashPoint("checkpoint-logged")
	if s.pinned != nil {
		s.pinned.Rollback()
	}
	s.pinned = rtx
	s.batchesSinceCheckpoint, s.logAtCheckpoint = 0, s.log.size
	return nil
}

// readMetaPage reads the meta page bbolt wrote for txid.
func (s *Store) readMetaPage(txid uint64) ([]byte, error) {
	size := s.db.Info().PageSize
	page := make([]byte, size)
	if _, err := s.file.ReadAt(page, int64(txid%2)*int64(size)); err != nil {
		return nil, err
	}
	if got := binary.LittleEndian.Uint64(page[metaTxidOffset:]); got != txid {
		return nil, fmt.Errorf("meta page %d holds transaction %d, not %d", txid%2, got, txid)
	}
	return page, nil
}

// restoreCheckpoint writes the checkpoint's meta page into both meta
// slots of the database file at path, unless both hold it already, and
// syncs the file.
func restoreCheckpoint(path string, c checkpointRecord) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	size := len(c.meta)
	if size < metaTxidOffset+8 || int(binary.LittleEndian.Uint32(c.meta[metaPageSizeOffset:])) != size {
		return errors.New("a checkpoint's meta page is not a meta page")
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if pages := int64(binary.LittleEndian.Uint64(c.meta[metaPagesOffset:])); st.Size() < pages*int64(size) {
		return fmt.Errorf("the log's checkpoint is of a database of %d pages and %s holds %d: they are not of one data directory", pages, path, st.Size()/int64(size))
	}
	if root, err := rootCRC(f, c.meta); err != nil || root != c.rootCRC {
		return fmt.Errorf("the log's checkpoint names a root page %s does not hold (%v): they are not of one data directory", path, err)
	}
	current := make([]byte, 2*size)
	if _, err := f.ReadAt(current, 0); err != nil {
		return err
	}
	wrote := false
	for slot := range 2 {
		page := bytes.Clone(c.meta)
		binary.LittleEndian.PutUint64(page[metaPageIDOffset:], uint64(slot))
		if bytes.Equal(current[slot*size:(slot+1)*size], page) {
			continue
		}
		if _, err := f.WriteAt(page, int64(slot*size)); err != nil {
			return err
		}
		wrote = true
	}
	if !wrote {
		return nil
	}
	return fdatasync(f)
}

// replay applies batches of logged steps in one transaction.
func replay(tx *bolt.Tx, batches [][]logOp) error {
	for _, ops := range batches {
		for _, o := range ops {
			b := tx.Bucket(o.bucket)
			if b == nil {
				return fmt.Errorf("a logged step writes to bucket %q, which the database has not", o.bucket)
			}
			var err error
			if o.del {
				err = b.Delete(o.key)
			} else {
				err = b.Put(o.key, o.value)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// checkpointDue reports whether the log has grown enough since the last
// checkpoint. The caller holds s.wmu.
func (s *Store) checkpointDue() bool {
	return s.batchesSinceCheckpoint >= checkpointEveryBatches || s.log.size-s.logAtCheckpoint >= checkpointEveryBytes
}

// checkpoints runs the checkpoints that steps made due until the store
// closes; Close waits for it.
func (s *Store) checkpoints() {
	defer close(s.checkpointerDone)
	for range s.checkpointWanted {
		s.wmu.Lock()
		if s.failed == nil && s.checkpointDue() {
			if err := s.checkpointLocked(); err != nil {
				_ = s.fail(fmt.Errorf("checkpoint: %w", err))
			}
		}
		s.wmu.Unlock()
	}
}

func fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// recoverCheckpoint reads the step log, when there is one, and puts its
// last checkpoint back into the database file, before bbolt opens it:
// the state the logged steps are replayed on.
func recoverCheckpoint(dir, dbPath string) (*loggedState, error) {
	path := filepath.Join(dir, stepLogName)
	logged, err := readStepLog(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, capstan.Errorf(capstan.EINTERNAL, "embedded store: the step log %s cannot be read: %v", path, err)
	}
	// bbolt's own lock on the file, held while the meta page is written
	// back: a process of a release without capstan.lock may have it open.
	held, err := lockWithin(dbPath, dir)
	if err != nil {
		return nil, err
	}
	defer held.Close()
	if err := restoreCheckpoint(dbPath, logged.checkpoint); err != nil {
		return nil, capstan.Errorf(capstan.EINTERNAL, "embedded store: restoring the checkpoint of %s: %v", path, err)
	}
	return logged, nil
}

// replay applies the steps logged after the checkpoint, in one synced
// transaction. A database at the step log's level without a log is
// refused: the steps acknowledged since its last checkpoint are gone.
func (s *Store) replay(logged *loggedState) error {
	if logged == nil {
		var level int
		_ = s.db.View(func(tx *bolt.Tx) error { level = schemaLevel(tx); return nil })
		if level >= stepLogLevel {
			return capstan.Errorf(capstan.EINTERNAL, "embedded store: %s is missing from %s; the steps written since its last checkpoint would be lost, so the data directory is not opened", stepLogName, s.dir)
		}
		return nil
	}
	if len(logged.batches) == 0 {
		return nil
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return replay(tx, logged.batches) }); err != nil {
		return capstan.Errorf(capstan.EINTERNAL, "embedded store: replaying %d batches of steps from %s: %v", len(logged.batches), stepLogName, err)
	}
	return nil
}

// rootCRC is the CRC-32C of the root page meta names, read from f.
func rootCRC(f *os.File, meta []byte) (uint32, error) {
	size := len(meta)
	page := make([]byte, size)
	root := int64(binary.LittleEndian.Uint64(meta[metaRootOffset:]))
	if _, err := f.ReadAt(page, root*int64(size)); err != nil {
		return 0, err
	}
	return crc32.Checksum(page, castagnoli), nil
}
