// Package shard is who runs which operations when replicas share one
// database: the 16 shards an operation id falls in (ShardOf), the lease
// of each (Lease, a database's; its grant is the fence every step
// carries, capstan.Fence), the pure decision of what a replica claims and
// gives up (Decide, Quota), and the Window a grant gives: no side effect
// starts outside it. The executor's tenure loop (executor/own.go) runs on
// them.
package shard

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/filelock"
)

// Lease is a database's shard leases (cypher.Store has them). Executors
// on one database share its operations by shard (shard.go, own.go): each
// runs the operations of the shards it holds, every write of one carries
// its shard's grant (capstan.Fence), and a shard moves to another
// executor when its holder dies, leaves, or has more than its share.
// (The embedded store needs none: its data directory is locked to one
// process, which runs every shard.)
type Lease interface {
	// JoinExecutors announces holder for ttl and returns every live
	// executor, sorted.
	JoinExecutors(ctx context.Context, holder string, ttl time.Duration) ([]string, error)
	// ExecutorLeases returns every shard's lease and the database's clock.
	ExecutorLeases(ctx context.Context) ([]capstan.LeaseHolder, time.Time, error)
	// ClaimLeases takes or extends the leases of keys that are free or
	// holder's, and returns each key's lease as it is now.
	ClaimLeases(ctx context.Context, holder string, keys []string, ttl time.Duration) ([]capstan.LeaseHolder, error)
	// ReleaseLeases gives holder's leases of keys back.
	ReleaseLeases(ctx context.Context, holder string, keys []string) error
	// LeaveExecutors withdraws holder.
	LeaveExecutors(ctx context.Context, holder string) error
}

// DefaultLeaseTerm is how long a lease lasts unless renewed; it is renewed
// every third of that.
const DefaultLeaseTerm = 15 * time.Second

// DefaultHolder names this executor to the others: its host and its
// directory, the same after a restart, so a restarted server takes its
// own leases back at once instead of waiting for them to expire. Two live
// processes cannot share the name: the directory is locked to one
// (LockDir).
func DefaultHolder(dir string) string {
	host, _ := os.Hostname()
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return host + ":" + dir
}

// LockDir locks the executor's directory to this process, so no other
// process on this host holds leases under the same name; the lock ends
// with the returned file (closed by Stop, or by the process's exit).
func LockDir(dir string) (*os.File, error) {
	f, err := filelock.TryLock(filepath.Join(dir, "executor.lock"))
	if errors.Is(err, filelock.ErrLocked) {
		return nil, capstan.Errorf(capstan.ECONFLICT, "executor directory %s is used by another process", dir)
	}
	if err != nil {
		return nil, capstan.Wrap("executor.Start", err)
	}
	return f, nil
}

// RenewTimeout bounds one renewal: a call that hangs on an unreachable
// database must not outlast the leases.
func RenewTimeout(term time.Duration) time.Duration { return term / 5 }

// Outlasts reports whether the next attempt to renew leases of term that
// run out at until — after a failed one, at now — could end after them:
// then the executor must stop running their operations now.
func Outlasts(now, until time.Time, term time.Duration) bool {
	return !now.Add(term/15 + RenewTimeout(term)).Before(until)
}
