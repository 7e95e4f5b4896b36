package neo4jtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/capstan-dev/capstan/internal/filelock"
)

// Test processes that share one external server (NEO4J_URI) take turns
// on it. Every executor resumes every unfinished operation of its
// database, across organizations, so two packages' tests running at once
// (go test runs packages in parallel) would run, and fight over, each
// other's operations. The turn is an exclusive flock on a file named
// after the URI, held from the first Start of a process to its last
// Close (or its exit). Servers the tests start themselves are their own.
var turn struct {
	sync.Mutex
	file  *os.File
	holds int
}

// takeTurn waits until this process has the shared server to itself and
// returns the function that gives the turn back.
func takeTurn(ctx context.Context, uri string) (func() error, error) {
	turn.Lock()
	defer turn.Unlock()
	if turn.holds == 0 {
		f, err := lockFile(ctx, uri)
		if err != nil {
			return nil, err
		}
		turn.file = f
	}
	turn.holds++
	var once sync.Once
	return func() (err error) {
		once.Do(func() {
			turn.Lock()
			defer turn.Unlock()
			if turn.holds--; turn.holds == 0 {
				err = turn.file.Close() // closing the descriptor releases the lock
				turn.file = nil
			}
		})
		return err
	}, nil
}

// lockFile opens the URI's lock file and waits for its exclusive lock.
func lockFile(ctx context.Context, uri string) (*os.File, error) {
	sum := sha256.Sum256([]byte(uri))
	path := filepath.Join(os.TempDir(), "capstan-neo4jtest-"+hex.EncodeToString(sum[:8])+".lock")
	said := false
	for {
		f, err := filelock.TryLock(path)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, filelock.ErrLocked) {
			return nil, fmt.Errorf("neo4jtest: locking %s: %w", path, err)
		}
		if !said {
			fmt.Fprintf(os.Stderr, "neo4jtest: another test process is using %s; waiting for its turn (%s)\n", uri, path)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("neo4jtest: waiting for %s: %w", uri, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
