package neo4jtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan/internal/filelock"
)

// Tests that share external servers (NEO4J_URI, a comma-separated pool
// that `make test` starts once: cmd/withneo4j) take turns on them. Every
// executor resumes every unfinished operation of its database, across
// organizations, so two tests using one database at once — in two
// packages, or two parallel tests of one — would run, and fight over,
// each other's operations. A turn is an exclusive flock on a file named
// after the server's URI, one per Start: a flock belongs to its open
// file, so it excludes other tests of the same process as well as other
// processes. It is held until Close (or the process's exit), and the
// database is emptied when the turn begins: each test gets an empty
// database, without a new JVM.

// takeTurn waits until the caller has one server of uris to itself and
// returns it with the function that gives the turn back.
func takeTurn(ctx context.Context, uris []string) (string, func() error, error) {
	said := false
	for {
		for _, uri := range uris {
			f, err := filelock.TryLock(lockPath(uri))
			if errors.Is(err, filelock.ErrLocked) {
				continue
			}
			if err != nil {
				return "", nil, fmt.Errorf("neo4jtest: locking %s: %w", lockPath(uri), err)
			}
			return uri, onceErr(f.Close), nil // closing the descriptor releases the lock
		}
		if !said {
			fmt.Fprintf(os.Stderr, "neo4jtest: every server of %s is in use; waiting for a turn\n", strings.Join(uris, ","))
			said = true
		}
		select {
		case <-ctx.Done():
			return "", nil, fmt.Errorf("neo4jtest: waiting for a turn on %s: %w", strings.Join(uris, ","), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// HoldTurn takes the turn on a server no test uses yet (one just
// started: withneo4j warms it up under it), without emptying it.
func HoldTurn(uri string) (release func() error, err error) {
	f, err := filelock.TryLock(lockPath(uri))
	if err != nil {
		return nil, fmt.Errorf("neo4jtest: taking the turn on %s: %w", uri, err)
	}
	return onceErr(f.Close), nil
}

// ForgetTurns removes the turns' lock files of servers that are gone.
func ForgetTurns(uris []string) {
	for _, uri := range uris {
		os.Remove(lockPath(uri))
	}
}

// lockPath is the turn's lock file of a server.
func lockPath(uri string) string {
	sum := sha256.Sum256([]byte(uri))
	return filepath.Join(os.TempDir(), "capstan-neo4jtest-"+hex.EncodeToString(sum[:8])+".lock")
}

// onceErr makes f safe to call more than once: only the first call acts.
func onceErr(f func() error) func() error {
	done := false
	return func() error {
		if done {
			return nil
		}
		done = true
		return f()
	}
}

// wipe empties the database: every relationship, then every node, in
// batches.
// Indexes and constraints stay; the store's migrations find level 0 and
// run again, as they do on a new database.
func wipe(ctx context.Context, s *Server) error {
	driver, err := neo4j.NewDriverWithContext(s.URI, s.Auth())
	if err != nil {
		return fmt.Errorf("neo4jtest: emptying %s: %w", s.URI, err)
	}
	defer driver.Close(ctx)
	session := driver.NewSession(ctx, neo4j.SessionConfig{})
	defer session.Close(ctx)
	// Relationships first, then the nodes: a node with a million edges
	// (a benchmark's) would not fit one transaction's memory.
	for _, q := range []string{
		"MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 5000 ROWS",
		"MATCH (n) CALL (n) { DELETE n } IN TRANSACTIONS OF 5000 ROWS",
	} {
		res, err := session.Run(ctx, q, nil)
		if err == nil {
			_, err = res.Consume(ctx)
		}
		if err != nil {
			return fmt.Errorf("neo4jtest: emptying %s: %w", s.URI, err)
		}
	}
	return nil
}
