// Package groupcommit batches the writes of concurrent callers into one
// commit, with no added delay: a caller that finds no commit running
// commits at once; callers that come while one runs wait for it, and the
// first of them then leads the next commit, which takes every caller
// queued by then. Both stores commit an operation's steps through it
// (embedded: one bbolt transaction; cypher: one statement).
package groupcommit

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// ErrUnanswered is the outcome of a call whose batch's commit ended
// before it answered it (it panicked).
var ErrUnanswered = errors.New("the commit of this write ended before it answered")

// Queue batches items of type T; Commit's run commits a batch.
type Queue[T any] struct {
	mu      sync.Mutex
	running bool
	queue   []*Call[T]
	// Commits counts the batches committed.
	commits int64
}

// Call is one caller's item in a batch, and its outcome: the commit
// function sets Err (and Result) of each call it was given.
type Call[T any] struct {
	Item   T
	Result any
	Err    error
	done   chan bool // true: lead the next commit; false: answered
}

// Commit queues item and returns its call once a commit answered it.
// take picks from the queue the calls of the next batch (the leader's
// first; nil takes them all), run commits a batch and sets each call's
// outcome. A call still queued when ctx ends leaves the queue (its Err is
// ctx's, wrapped by gone); one taken into a batch waits for its answer.
// run need not answer the calls itself; Commit does, even if run panics.
func (q *Queue[T]) Commit(ctx context.Context, item T, take func(queue []*Call[T]) (batch, rest []*Call[T]), run func(batch []*Call[T]), gone func(error) error) *Call[T] {
	me := &Call[T]{Item: item, done: make(chan bool, 1)}
	q.mu.Lock()
	q.queue = append(q.queue, me)
	if q.running {
		q.mu.Unlock()
		select {
		case lead := <-me.done:
			if !lead {
				return me
			}
		case <-ctx.Done():
			if !q.leave(me) {
				me.Err = gone(ctx.Err())
				return me
			}
			if lead := <-me.done; !lead { // taken into a batch, or given the lead
				return me
			}
		}
		q.mu.Lock()
	}
	q.running = true
	batch := q.queue
	q.queue = nil
	if take != nil {
		batch, q.queue = take(batch)
	}
	q.commits++
	q.mu.Unlock()
	defer q.handOff()
	defer answer(batch[1:])
	for _, c := range batch {
		c.Err = ErrUnanswered // until run says otherwise
	}
	run(batch)
	return me
}

// answer tells every waiting call of the batch that it is answered.
func answer[T any](calls []*Call[T]) {
	for _, c := range calls {
		c.done <- false
	}
}

// leave takes a call whose context ended out of the queue, and reports
// false when it did; true means it was already taken into a batch or
// given the lead (handOff picks under mu), and must wait.
func (q *Queue[T]) leave(me *Call[T]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(me.done) > 0 {
		return true
	}
	i := slices.Index(q.queue, me)
	if i < 0 {
		return true
	}
	q.queue = slices.Delete(q.queue, i, i+1)
	return false
}

// handOff lets the first call queued lead the next commit, or ends the
// run.
func (q *Queue[T]) handOff() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) > 0 {
		q.queue[0].done <- true
		return
	}
	q.running = false
}

// Commits counts the batches committed so far.
func (q *Queue[T]) Commits() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.commits
}
