package embedded

import (
	"context"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/capstan-dev/capstan"
)

// Group commit across operations. Every bbolt commit costs two fsyncs,
// whatever it holds; steps of different operations that become ready
// while a commit is on disk therefore wait for it and then commit
// together, in one transaction (one pair of fsyncs). There is no added
// delay: a step that finds no commit running commits at once (a lone
// chain is not slowed); one that finds a commit running joins the next.
// The first step queued behind a commit leads the next one, which takes
// every step queued by then.

// groupCommit queues the steps waiting for the running commit.
type groupCommit struct {
	mu      sync.Mutex
	running bool
	queue   []*groupStep
}

// groupStep is one step waiting: its writes, and where its outcome (or
// the turn to lead) is told.
type groupStep struct {
	fn       func(tx *bolt.Tx) error
	err      error
	done     chan bool // true: lead the next commit; false: committed (err set)
	answered bool      // set by the leader's goroutine once err is final
}

// answer tells the step its outcome (its err).
func (st *groupStep) answer() {
	st.answered = true
	st.done <- false
}

// updateGrouped runs fn in a write transaction shared with the steps of
// other operations that wait at the same moment. A step still queued when
// its context ends leaves the queue; one taken into a commit waits for
// its outcome (it may have committed).
func (s *Store) updateGrouped(ctx context.Context, op string, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return capstan.Errorf(capstan.EUNAVAILABLE, "%s: %v", op, err)
	}
	g := &s.group
	me := &groupStep{fn: fn, done: make(chan bool, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, me)
	if g.running {
		g.mu.Unlock()
		select {
		case lead := <-me.done:
			if !lead {
				return wrap(op, me.err)
			}
		case <-ctx.Done():
			if !g.leave(me) {
				return capstan.Errorf(capstan.EUNAVAILABLE, "%s: %v", op, ctx.Err())
			}
			if lead := <-me.done; !lead {
				return wrap(op, me.err)
			}
		}
		g.mu.Lock()
	}
	g.running = true
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()
	defer g.handOff()
	s.commitSteps(batch)
	return wrap(op, me.err)
}

// leave takes a step whose context ended out of the queue, and reports
// false when it did; true means it was already taken into a commit or
// given the lead, and must wait for its outcome or lead.
func (g *groupCommit) leave(me *groupStep) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(me.done) > 0 {
		return true
	}
	i := slices.Index(g.queue, me)
	if i < 0 {
		return true
	}
	g.queue = slices.Delete(g.queue, i, i+1)
	return false
}

// handOff lets the first step queued lead the next commit, or ends the
// run; it runs even when a commit panicked, so the queue never stalls.
func (g *groupCommit) handOff() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) > 0 {
		g.queue[0].done <- true
		return
	}
	g.running = false
}

// commitSteps commits the steps in one transaction. A step that fails
// fails alone: the transaction is rolled back and the others commit
// again without it (bbolt has no savepoints); most failures (a stale
// version) are found before the step writes anything, so this is rare.
func (s *Store) commitSteps(batch []*groupStep) {
	s.groupCommits.Add(1)
	leader := batch[0]
	defer func() { // a panic below still answers every step
		for _, st := range batch {
			if st != leader && !st.answered {
				st.err = capstan.Errorf(capstan.EINTERNAL, "the commit of this step failed")
				st.answer()
			}
		}
	}()
	for len(batch) > 0 {
		failed := -1
		var failure error
		err := s.db.Update(func(tx *bolt.Tx) error {
			for i, st := range batch {
				if err := st.fn(tx); err != nil {
					failed, failure = i, err
					return err
				}
			}
			return nil
		})
		if failed < 0 {
			for _, st := range batch {
				st.err = err // nil, or the commit's own failure: every step's
				st.answer()
			}
			return
		}
		batch[failed].err = failure
		batch[failed].answer()
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}

// GroupCommits counts the transactions that committed operation steps
// (several steps each when they came at once).
func (s *Store) GroupCommits() int64 { return s.groupCommits.Load() }
