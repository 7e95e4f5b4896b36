// Package embedded is the zero-setup store: an in-process bbolt database in
// a data directory. Every write is one bbolt transaction (shared with the
// writes that wait at the same moment, group.go), durable before it
// returns by one append to the step log (steplog.go), so what was
// acknowledged survives a restart, a kill -9 or a power cut; checkpoints
// sync the database and bound the log (checkpoint.go).
package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/filelock"
	"github.com/capstan-dev/capstan/internal/groupcommit"
)

var _ capstan.Store = (*Store)(nil)

// Bucket names. Keys are org NUL rest, so one prefix scan never crosses
// organizations.
var (
	bResources     = []byte("resources")      // org, id -> Resource
	bResourceKeys  = []byte("resource_keys")  // org, key -> id
	bProvides      = []byte("provides")       // org, capability, id -> ""
	bIncoming      = []byte("incoming")       // org, target key, type, source id -> ""
	bPacks         = []byte("packs")          // org, id@version -> ScenarioPack
	bCapabilities  = []byte("capabilities")   // org, key -> CapabilityDefinition
	bResourceTypes = []byte("resource_types") // org, key -> ResourceType
	bScenarios     = []byte("scenarios")      // org, id@version -> Scenario
	bPolicies      = []byte("policies")       // org, pack id, policy id -> Policy
	bIntents       = []byte("intents")        // org, id -> Intent
	bPlans         = []byte("plans")          // org, id -> Plan
	bIntentPlans   = []byte("intent_plans")   // org, intent id, plan id -> ""
	bOperations    = []byte("operations")     // org, id -> Operation
	bRevisions     = []byte("plan_revisions") // org, plan id, %08d revision -> PlanRevision
	bPatches       = []byte("plan_patches")   // org, id -> PlanPatch
	bOpPatches     = []byte("op_patches")     // org, operation id, patch id -> ""
	bOperationKeys = []byte("operation_keys") // org, idempotency key -> id
	bActiveOps     = []byte("active_ops")     // org, id -> "" while not terminal
	bOpRecords     = []byte("op_records")     // org, op id, kind, key -> record
	bEvents        = []byte("events")         // org, op id, sequence (hex) -> OperationEvent
	bOpVersions    = []byte("op_versions")    // org, op id -> version, created (16 bytes): a step's check without decoding
	allBuckets     = [][]byte{bResources, bResourceKeys, bProvides, bIncoming, bPacks, bCapabilities,
		bResourceTypes, bScenarios, bPolicies, bIntents, bPlans, bIntentPlans,
		bOperations, bOperationKeys, bActiveOps, bOpRecords, bEvents, bRevisions, bPatches, bOpPatches, bOpVersions}
)

// knownBuckets are the buckets a write may go to (checkWrite).
var knownBuckets = func() map[string]bool {
	m := map[string]bool{}
	for _, b := range append(slices.Clone(allBuckets), bProviderBindings, bPlanProviders, bMeta) {
		m[string(b)] = true
	}
	return m
}()

// Store is the embedded store.
type Store struct {
	db    *bolt.DB
	dir   string
	lock  *os.File // the data directory's lock (capstan.lock)
	file  *os.File // capstan.db, read for meta pages
	now   func() time.Time
	cache *providerCache
	// group batches the steps of operations committing at the same
	// moment (group.go).
	group groupcommit.Queue[writeFunc]

	// wmu is held by every commit: the step log, the pinned reader and
	// the counts below are its.
	wmu         sync.Mutex
	log         *stepLog
	pinned      *bolt.Tx // a reader at the last checkpoint (checkpoint.go)
	active      *memTree // the writes since the last flush (memtable.go)
	activeBytes int
	activeSince time.Time
	flushDone   chan struct{} // closed when the running flush ended; nil when none runs
	flushAt     int           // bytes that make a flush due (flushAtBytes)
	memMax      int           // bytes past which a batch waits for the running flush (memMaxBytes)
	hooks       struct {
		beforeFlushCommit func()                // a test's: stalls a flush
		waitingForFlush   func(activeBytes int) // a test's: a batch waits for the flush
	}
	failed                 error                 // set when a write could not be made durable (fail)
	down                   atomic.Pointer[error] // the answer to every call after it
	batchesSinceCheckpoint int
	logAtCheckpoint        int64
	checkpointWanted       chan struct{} // closed by Close, under wmu
	checkpointerDone       chan struct{}
	closing                bool

	// mem is what readers see above bbolt; pubMu orders its publications,
	// commitMu is held by a flush from its commit to its publication.
	mem      atomic.Pointer[memState]
	pubMu    sync.Mutex
	commitMu sync.Mutex
	flushErr atomic.Pointer[error] // a flush that failed
}

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock used for created/updated timestamps.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// Open opens (creating when needed) the store in dir, recovering what
// the step log holds past its last checkpoint.
func Open(dir string, opts ...Option) (*Store, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, capstan.Wrap("embedded.Open", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, lock: lock, now: time.Now, cache: newProviderCache(), flushAt: flushAtBytes, memMax: memMaxBytes,
		checkpointWanted: make(chan struct{}, 1), checkpointerDone: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	if err := s.open(); err != nil {
		s.closeFiles()
		return nil, err
	}
	go s.checkpoints()
	return s, nil
}

// open recovers and opens the database, migrates it and starts a new
// step log at a checkpoint of it.
func (s *Store) open() error {
	dbPath := filepath.Join(s.dir, "capstan.db")
	logged, err := recoverCheckpoint(s.dir, dbPath)
	if err != nil {
		return err
	}
	s.db, err = bolt.Open(dbPath, 0o600, &bolt.Options{Timeout: 2 * time.Second, NoFreelistSync: true, FreelistType: bolt.FreelistMapType,
		InitialMmapSize: mmapBytes, MaxSize: maxBytes})
	if errors.Is(err, bolt.ErrTimeout) {
		return capstan.Errorf(capstan.EUNAVAILABLE, "data directory %s is locked by another process", s.dir)
	}
	if err != nil {
		return capstan.Wrap("embedded.Open", err)
	}
	if s.file, err = os.Open(dbPath); err != nil {
		return capstan.Wrap("embedded.Open", err)
	}
	if err := s.replay(logged); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	// A log is started before the migrations (a crash in one of them
	// recovers to the level before it) and again after them.
	if err := s.checkpointLocked(); err != nil {
		return capstan.Errorf(capstan.EINTERNAL, "embedded store: starting the step log: %v", err)
	}
	if err := migrate(s.db); err != nil {
		return err
	}
	s.db.NoSync = true // durable by the step log and checkpoints from here
	if err := s.checkpointLocked(); err != nil {
		return capstan.Errorf(capstan.EINTERNAL, "embedded store: starting the step log: %v", err)
	}
	return s.startMemtable()
}

// lockDir takes the data directory's lock, waiting up to two seconds for
// another process to let it go.
func lockDir(dir string) (*os.File, error) {
	return lockWithin(filepath.Join(dir, "capstan.lock"), dir)
}

// lockWithin takes path's lock within two seconds; what is locked is
// named what in the refusal.
func lockWithin(path, what string) (*os.File, error) {
	f, err := filelock.Within(path, 2*time.Second)
	if errors.Is(err, filelock.ErrLocked) {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "data directory %s is locked by another process", what)
	}
	if err != nil {
		return nil, capstan.Wrap("embedded.Open", err)
	}
	return f, nil
}

func (s *Store) closeFiles() {
	if s.pinned != nil {
		s.pinned.Rollback()
		s.pinned = nil
	}
	if s.db != nil {
		s.db.Close()
	}
	if s.file != nil {
		s.file.Close()
	}
	s.log.close()
	s.lock.Close()
}

// SchemaLevel is the level of the last migration the store ran.
func (s *Store) SchemaLevel(ctx context.Context) (int, error) {
	var level int
	err := s.view(ctx, "embedded.SchemaLevel", func(tx *rtx) error { level = schemaLevel(tx.tx); return nil })
	return level, err
}

// Close makes every write durable in the database (a checkpoint, so the
// next open replays nothing) and closes it.
func (s *Store) Close() error {
	s.wmu.Lock()
	if s.closing {
		s.wmu.Unlock()
		return nil
	}
	s.closing = true // no step asks for a checkpoint after this
	close(s.checkpointWanted)
	s.wmu.Unlock()
	<-s.checkpointerDone
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var err error
	if s.failed == nil {
		err = s.checkpointLocked()
	}
	if s.flushDone != nil { // a failed store's flush
		<-s.flushDone
	}
	s.closeFiles()
	return wrap("embedded.Close", err)
}

// Ping reports whether the database is open.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.stopped(); err != nil {
		return err
	}
	if err := s.db.View(func(*bolt.Tx) error { return nil }); err != nil {
		return capstan.Errorf(capstan.EUNAVAILABLE, "embedded store: %v", err)
	}
	return nil
}

func (s *Store) view(ctx context.Context, op string, fn func(tx *rtx) error) error {
	if err := ctx.Err(); err != nil {
		return capstan.Errorf(capstan.EUNAVAILABLE, "%s: %v", op, err)
	}
	if err := s.stopped(); err != nil {
		return err
	}
	r, err := s.snapshot()
	if err != nil {
		return wrap(op, err)
	}
	defer r.tx.Rollback()
	return wrap(op, fn(r))
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *capstan.Error
	if errors.As(err, &ce) {
		return err
	}
	return &capstan.Error{Code: capstan.EINTERNAL, Op: op, Err: err}
}

// key joins parts with NUL separators.
func key(parts ...string) []byte {
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(0)
		}
		b.WriteString(p)
	}
	return b.Bytes()
}

// prefix is key(parts...) followed by a separator, for prefix scans.
func prefix(parts ...string) []byte { return append(key(parts...), 0) }

func getJSON(b *rbucket, k []byte, v any) (bool, error) {
	data := b.Get(k)
	if data == nil {
		return false, nil
	}
	return true, json.Unmarshal(data, v)
}

// scan calls fn for every key with prefix p, in key order, starting after
// the key `after` when it is not nil. fn returns false to stop.
func scan(b *rbucket, p, after []byte, fn func(k, v []byte) (bool, error)) error {
	c := b.Cursor()
	k, v := c.Seek(p)
	if after != nil {
		k, v = c.Seek(after)
		if k != nil && bytes.Equal(k, after) {
			k, v = c.Next()
		}
	}
	for ; k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
		more, err := fn(k, v)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// lastPart returns the text after the last NUL of k.
func lastPart(k []byte) string {
	i := bytes.LastIndexByte(k, 0)
	return string(k[i+1:])
}

// touch sets meta for a write: creation fields when new, version bump always.
func (s *Store) touch(m *capstan.Meta, org string, created bool) {
	m.Touch(org, created, s.now())
}

// Writes is how many writes the store has made to its file since it was
// opened (bbolt's count: one per page, or per run of pages of a node that
// outgrew one, and one for the meta page of each commit): what a commit
// costs on disk, reported by the executor's benchmarks.
func (s *Store) Writes() int64 {
	st := s.db.Stats()
	return st.TxStats.GetWrite()
}
