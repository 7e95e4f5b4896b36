package embedded

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/groupcommit"
)

// Group commit across operations. Every bbolt commit costs two fsyncs,
// whatever it holds; steps of different operations that become ready
// while a commit is on disk therefore wait for it and then commit
// together, in one transaction (one pair of fsyncs), through
// internal/groupcommit: no added delay for a step that finds no commit
// running (a lone chain is not slowed).

// stepWrite is one step's writes in a transaction.
type stepWrite = func(tx *bolt.Tx) error

// updateGrouped runs fn in a write transaction shared with the steps of
// other operations that wait at the same moment.
func (s *Store) updateGrouped(ctx context.Context, op string, fn stepWrite) error {
	if err := ctx.Err(); err != nil {
		return capstan.Errorf(capstan.EUNAVAILABLE, "%s: %v", op, err)
	}
	c := s.group.Commit(ctx, fn, nil, s.commitSteps, func(err error) error {
		return capstan.Errorf(capstan.EUNAVAILABLE, "%s: %v", op, err)
	})
	return wrap(op, c.Err)
}

// commitSteps commits the steps in one transaction. A step that fails
// fails alone: the transaction is rolled back and the others commit
// again without it (bbolt has no savepoints); most failures (a stale
// version) are found before the step writes anything, so this is rare.
func (s *Store) commitSteps(batch []*groupcommit.Call[stepWrite]) {
	for len(batch) > 0 {
		failed := -1
		var failure error
		err := s.db.Update(func(tx *bolt.Tx) error {
			for i, c := range batch {
				if err := c.Item(tx); err != nil {
					failed, failure = i, err
					return err
				}
			}
			return nil
		})
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

// GroupCommits counts the transactions that committed operation steps
// (several steps each when they came at once).
func (s *Store) GroupCommits() int64 { return s.group.Commits() }

// PageWrites counts the page writes of every transaction the store
// committed (bbolt's own count): what a commit's syncs carry to disk.
func (s *Store) PageWrites() int64 {
	st := s.db.Stats()
	return st.TxStats.GetWrite()
}
