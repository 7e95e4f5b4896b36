// Package cypher is the Neo4j store. Resources, capability definitions,
// provided capabilities, requirements and bindings are nodes and
// relationships (see docs/NEO4J.md), so capability resolution is one Cypher
// traversal. Every query takes $parameters and is scoped to an organization;
// writes run in managed transactions (which may retry, so each transaction
// function is idempotent) and multi-entity changes commit atomically.
package cypher

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/groupcommit"
)

var _ capstan.Store = (*Store)(nil)

// Config says how to reach Neo4j.
type Config struct {
	URI      string
	User     string
	Password string
	Database string
	Log      *slog.Logger
	Now      func() time.Time
}

// Store is the Neo4j store.
type Store struct {
	driver neo4j.DriverWithContext
	// tail is the timeline tailer's own driver (tail.go): its reads wait
	// for no request's connection, and take at most tailConnections.
	tail neo4j.DriverWithContext
	db   string
	log  *slog.Logger
	now  func() time.Time
	// bookmarks chains the store's sessions on a routing URI (a
	// cluster): a read waits, on whichever member serves it, for the
	// writes this process made before it (nil on a single server).
	bookmarks neo4j.BookmarkManager

	schemaMu    sync.Mutex
	schemaReady bool

	// unavailableSaid is set once a call's UNAVAILABLE is logged, until a
	// call succeeds (mapErr).
	unavailableSaid atomic.Bool

	// definitions holds a *knownDefinition per capability uid searched
	// (resolve.go).
	definitions sync.Map

	// cursors holds a stepCursor per unfinished operation this store
	// wrote (step.go).
	cursors sync.Map
	// group batches the steps of operations committing at the same
	// moment into one statement (group.go).
	group groupcommit.Queue[stepRow]
}

// retryTime bounds how long a transaction that failed with a retryable
// error is tried again (managed by the driver, or readOne's own).
const retryTime = 5 * time.Second

// Open creates the driver. It does not need Neo4j to be up: the schema is
// applied on first use, and until then calls fail with EUNAVAILABLE.
func Open(cfg Config) (*Store, error) {
	auth := neo4j.NoAuth()
	if cfg.User != "" {
		auth = neo4j.BasicAuth(cfg.User, cfg.Password, "")
	}
	d, err := newDriver(cfg.URI, auth, requestConnections)
	if err != nil {
		return nil, err
	}
	tail, err := newDriver(cfg.URI, auth, tailConnections)
	if err != nil {
		d.Close(context.Background())
		return nil, err
	}
	s := &Store{driver: d, tail: tail, db: cfg.Database, log: cfg.Log, now: cfg.Now}
	if routing(cfg.URI) {
		s.bookmarks = neo4j.NewBookmarkManager(neo4j.BookmarkManagerConfig{})
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Connections of a process to Neo4j: requests and steps share the first
// pool; the timeline tailer has its own, so that a burst of requests
// never queues the reads that deliver every subscriber's events, and the
// tailer never takes more than its two.
const (
	requestConnections = 50
	tailConnections    = 2
)

func newDriver(uri string, auth neo4j.AuthToken, connections int) (neo4j.DriverWithContext, error) {
	d, err := neo4j.NewDriverWithContext(uri, auth, func(c *config.Config) {
		c.MaxConnectionPoolSize = connections
		c.ConnectionAcquisitionTimeout = 5 * time.Second
		c.SocketConnectTimeout = 3 * time.Second
		c.MaxTransactionRetryTime = retryTime
		c.MaxConnectionLifetime = 30 * time.Minute
		c.ConnectionLivenessCheckTimeout = 30 * time.Second
	})
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "neo4j: %v", err)
	}
	return d, nil
}

// Close closes the drivers.
func (s *Store) Close() error {
	return errors.Join(s.tail.Close(context.Background()), s.driver.Close(context.Background()))
}

// Ping reports whether Neo4j answers and the schema is in place.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if err := s.driver.VerifyConnectivity(ctx); err != nil {
		return unavailable(err)
	}
	return nil
}

// ready runs the migrations once Neo4j answers (migrate.go).
func (s *Store) ready(ctx context.Context) error {
	s.schemaMu.Lock()
	defer s.schemaMu.Unlock()
	if s.schemaReady {
		return nil
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	s.schemaReady = true
	return nil
}

func (s *Store) session(ctx context.Context, mode neo4j.AccessMode) neo4j.SessionWithContext {
	return s.sessionOn(ctx, s.driver, mode)
}

func (s *Store) sessionOn(ctx context.Context, d neo4j.DriverWithContext, mode neo4j.AccessMode) neo4j.SessionWithContext {
	return d.NewSession(ctx, neo4j.SessionConfig{AccessMode: mode, DatabaseName: s.db, BookmarkManager: s.bookmarks})
}

// routing reports whether uri is a routing one (neo4j://, neo4j+s://,
// neo4j+ssc://): a cluster's, or a single server's that routes.
func routing(uri string) bool {
	scheme, _, _ := strings.Cut(uri, "://")
	return scheme == "neo4j" || scheme == "neo4j+s" || scheme == "neo4j+ssc"
}

// Bookmarks are the bookmarks the store's sessions carry — its latest
// writes, which a read waits for on any member — or nil when it does not
// chain them (a bolt:// URI: one server).
func (s *Store) Bookmarks(ctx context.Context) []string {
	if s.bookmarks == nil {
		return nil
	}
	b, err := s.bookmarks.GetBookmarks(ctx)
	if err != nil {
		return nil
	}
	return b
}

// write runs fn in a managed write transaction.
func (s *Store) write(ctx context.Context, op string, fn func(tx neo4j.ManagedTransaction) (any, error)) (any, error) {
	return s.writeBounded(ctx, op, 0, fn)
}

// writeOperation runs fn, a write that touches an operation (sets its
// touched time), in a managed write transaction the server ends unless
// it commits within capstan.MaxOperationCommit: a commit that becomes
// visible later than that is none, so a tailer that looks back further
// never misses one (live.Tailer's lookback).
func (s *Store) writeOperation(ctx context.Context, op string, fn func(tx neo4j.ManagedTransaction) (any, error)) (any, error) {
	return s.writeBounded(ctx, op, capstan.MaxOperationCommit, fn)
}

// writeBounded runs fn in a managed write transaction bounded by timeout
// on the server (0: the server's own bound).
func (s *Store) writeBounded(ctx context.Context, op string, timeout time.Duration, fn func(tx neo4j.ManagedTransaction) (any, error)) (any, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	sess := s.session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	res, err := sess.ExecuteWrite(ctx, fn, boundedBy(timeout)...)
	return res, s.mapErr(ctx, op, err)
}

// read runs fn in a managed read transaction.
func (s *Store) read(ctx context.Context, op string, fn func(tx neo4j.ManagedTransaction) (any, error)) (any, error) {
	return s.readBounded(ctx, op, 0, fn)
}

// boundedBy is a transaction's configuration for a bound on the server
// (0: the server's own).
func boundedBy(timeout time.Duration) []func(*neo4j.TransactionConfig) {
	if timeout <= 0 {
		return nil
	}
	return []func(*neo4j.TransactionConfig){neo4j.WithTxTimeout(timeout)}
}

// timedOut reports whether err is a transaction that ran past the bound
// its caller set (boundedBy).
func timedOut(err error) bool {
	var ne *neo4j.Neo4jError
	return errors.As(err, &ne) && strings.Contains(ne.Code, "TransactionTimedOut")
}

// readBounded runs fn in a managed read transaction bounded by timeout
// on the server (0: the server's own bound).
func (s *Store) readBounded(ctx context.Context, op string, timeout time.Duration, fn func(tx neo4j.ManagedTransaction) (any, error)) (any, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	sess := s.session(ctx, neo4j.AccessModeRead)
	defer sess.Close(ctx)
	res, err := sess.ExecuteRead(ctx, fn, boundedBy(timeout)...)
	return res, s.mapErr(ctx, op, err)
}

// runner runs one statement: a managed transaction, or a session's
// auto-commit transaction (autoCommit).
type runner interface {
	Run(ctx context.Context, cypher string, params map[string]any) (neo4j.ResultWithContext, error)
}

// collect runs one statement and reads all its records.
func collect(ctx context.Context, tx runner, q string, params map[string]any) ([]*neo4j.Record, error) {
	res, err := tx.Run(ctx, q, params)
	if err != nil {
		return nil, err
	}
	return res.Collect(ctx)
}

// single runs one statement that returns exactly one record and reads it.
func single(ctx context.Context, tx runner, q string, params map[string]any) (*neo4j.Record, error) {
	res, err := tx.Run(ctx, q, params)
	if err != nil {
		return nil, err
	}
	return res.Single(ctx)
}

// autoCommit runs each statement in a transaction of its own.
type autoCommit struct {
	sess    neo4j.SessionWithContext
	timeout time.Duration // the server ends a statement that runs longer (0: its own bound)
}

func (a autoCommit) Run(ctx context.Context, cypher string, params map[string]any) (neo4j.ResultWithContext, error) {
	if a.timeout > 0 {
		return a.sess.Run(ctx, cypher, params, neo4j.WithTxTimeout(a.timeout))
	}
	return a.sess.Run(ctx, cypher, params)
}

// readOne runs fn, whose reads are each one statement consistent by
// itself, in auto-commit transactions: one round trip per statement
// instead of a managed transaction's two (its COMMIT is a round trip of
// its own; ~0.6 ms of a ~1.3 ms read on the development machine).
func (s *Store) readOne(ctx context.Context, op string, fn func(r runner) (any, error)) (any, error) {
	return s.oneStatement(ctx, op, neo4j.AccessModeRead, 0, fn)
}

// readTail is readOne on the tailer's own connections.
func (s *Store) readTail(ctx context.Context, op string, fn func(r runner) (any, error)) (any, error) {
	return s.statementOn(ctx, s.tail, op, neo4j.AccessModeRead, 0, fn)
}

// writeStatement runs fn, a write that is one statement, in an auto-commit
// transaction: the statement commits with its own round trip (~0.2 ms of
// a ~0.7 ms managed write here). The statement must be safe to run again:
// a retry may follow a commit whose answer was lost.
func (s *Store) writeStatement(ctx context.Context, op string, fn func(r runner) (any, error)) (any, error) {
	return s.oneStatement(ctx, op, neo4j.AccessModeWrite, 0, fn)
}

// writeOperationStatement is writeStatement for a statement that touches
// operations, bounded as writeOperation is.
func (s *Store) writeOperationStatement(ctx context.Context, op string, fn func(r runner) (any, error)) (any, error) {
	return s.oneStatement(ctx, op, neo4j.AccessModeWrite, capstan.MaxOperationCommit, fn)
}

// oneStatement runs fn in auto-commit transactions of a session in mode.
// A failure the driver calls retryable is retried as a managed
// transaction would be, with backoff, for up to the driver's retry time.
func (s *Store) oneStatement(ctx context.Context, op string, mode neo4j.AccessMode, timeout time.Duration, fn func(r runner) (any, error)) (any, error) {
	return s.statementOn(ctx, s.driver, op, mode, timeout, fn)
}

// statementOn is oneStatement on the connections of driver d.
func (s *Store) statementOn(ctx context.Context, d neo4j.DriverWithContext, op string, mode neo4j.AccessMode, timeout time.Duration, fn func(r runner) (any, error)) (any, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	sess := s.sessionOn(ctx, d, mode)
	defer sess.Close(ctx)
	var res any
	err := retrying(ctx, func() (err error) {
		res, err = fn(autoCommit{sess: sess, timeout: timeout})
		return err
	})
	return res, s.mapErr(ctx, op, err)
}

// retrying runs try until it succeeds, fails with an error the driver
// does not call retryable, or the driver's retry time has passed, waiting
// twice as long after each failure, from 10 ms up to a second.
func retrying(ctx context.Context, try func() error) error {
	start, wait := time.Now(), 10*time.Millisecond
	for {
		err := try()
		if err == nil || !neo4j.IsRetryable(err) || time.Since(start)+wait > retryTime {
			return err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(2*wait, time.Second)
	}
}

// cancelled is ctx's error when a statement failed because ctx ended: the
// driver reports that as a connection error that does not wrap
// context.Canceled, which would otherwise read as an internal failure. An
// error of our own (a conflict, say) stays what it is.
func cancelled(ctx context.Context, err error) error {
	var ce *capstan.Error
	if err != nil && ctx.Err() != nil && !errors.As(err, &ce) {
		return ctx.Err()
	}
	return err
}

// mapErr turns a failure of op under ctx into Capstan's typed errors.
func (s *Store) mapErr(ctx context.Context, op string, err error) error {
	err = cancelled(ctx, err)
	if err == nil {
		if s.unavailableSaid.Load() {
			s.unavailableSaid.Store(false)
		}
		return nil
	}
	var ce *capstan.Error
	if errors.As(err, &ce) {
		return err
	}
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) && strings.Contains(ne.Code, "ConstraintValidationFailed") {
		return capstan.Errorf(capstan.ECONFLICT, "%s: already exists", op)
	}
	if timedOut(err) {
		// The caller's bound (readBounded, writeBounded), not a fault of
		// Neo4j's: the caller says what it means.
		return &capstan.Error{Code: capstan.EUNAVAILABLE, Op: op, Message: "ran past its time bound", Err: err}
	}
	if isUnavailable(err) {
		// Not the caller going away: say what Neo4j did, once until a
		// call succeeds again (an outage fails every call).
		if ctx.Err() == nil && s.unavailableSaid.CompareAndSwap(false, true) {
			s.log.Warn("neo4j unavailable", "op", op, "err", err.Error())
		}
		return unavailable(err)
	}
	s.log.Error("neo4j error", "op", op, "err", err.Error())
	return &capstan.Error{Code: capstan.EINTERNAL, Op: op, Err: err}
}

func isUnavailable(err error) bool {
	var ce *neo4j.ConnectivityError
	if errors.As(err, &ce) || neo4j.IsConnectivityError(err) || neo4j.IsRetryable(err) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) && strings.HasPrefix(ne.Code, "Neo.TransientError") {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "ConnectivityError") || strings.Contains(msg, "i/o timeout")
}

func unavailable(err error) error {
	return &capstan.Error{Code: capstan.EUNAVAILABLE, Message: "neo4j is not reachable; try again", Err: err}
}

// uid scopes a local id or key to an organization: every unique property
// the store uses is one of these, so no lookup can cross organizations.
func uid(org string, parts ...string) string {
	return org + "|" + strings.Join(parts, "|")
}

// touch sets meta for a write, as the embedded store does.
func (s *Store) touch(m *capstan.Meta, org string, created bool) {
	m.Touch(org, created, s.now())
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func i64(v any) int64 {
	n, _ := v.(int64)
	return n
}

// checkVersion reads a node with q and checks the version the caller read:
// ENOTFOUND when there is no such node, ECONFLICT when it is stale. q is a
// query of $uid that takes the node's write lock first (SET n.locked =
// true REMOVE n.locked) and only then returns at least version: the lock
// and the read are one round trip. The order matters: a version read
// before the lock (a WHERE ahead of the SET) would let two transactions
// read the same version and both write. A concurrent writer waits on the
// lock, then sees the new version: one wins, the other gets ECONFLICT
// (conformance case ConcurrentWritersOneConflict).
func checkVersion(ctx context.Context, tx neo4j.ManagedTransaction, what, id, nodeUID string, version int64, q string) (map[string]any, error) {
	recs, err := collect(ctx, tx, q, map[string]any{"uid": nodeUID})
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, capstan.NotFound(what, id)
	}
	m := recs[0].AsMap()
	if have := i64(m["version"]); have != version {
		return nil, capstan.StaleVersion(what, id, have, version)
	}
	return m, nil
}

// listPage runs a page query (rows with a json column) and its count query
// with the same parameters in one read transaction.
func listPage[T any](s *Store, ctx context.Context, op, pageQuery, countQuery string, params map[string]any) ([]*T, int, error) {
	type page struct {
		items []*T
		total int
	}
	res, err := s.read(ctx, op, func(tx neo4j.ManagedTransaction) (any, error) {
		items, err := queryJSON[T](ctx, tx, pageQuery, params)
		if err != nil {
			return nil, err
		}
		rec, err := single(ctx, tx, countQuery, params)
		if err != nil {
			return nil, err
		}
		total, _ := rec.Get("total")
		return page{items, int(i64(total))}, nil
	})
	if err != nil {
		return nil, 0, err
	}
	p := res.(page)
	return p.items, p.total, nil
}
