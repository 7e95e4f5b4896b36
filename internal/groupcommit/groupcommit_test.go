package groupcommit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func answerAll[T any](batch []*Call[T]) {
	for _, c := range batch {
		c.Err = nil
	}
}

// TestCallersAreBatchedAndAnswered: many callers at once all get their
// own outcome, in fewer commits than callers; a lone caller commits at
// once.
func TestCallersAreBatchedAndAnswered(t *testing.T) {
	var q Queue[int]
	var mu sync.Mutex
	var sizes []int
	run := func(batch []*Call[int]) {
		time.Sleep(2 * time.Millisecond) // a commit on disk
		mu.Lock()
		sizes = append(sizes, len(batch))
		mu.Unlock()
		for _, c := range batch {
			c.Result, c.Err = c.Item*10, nil
		}
	}
	c := q.Commit(context.Background(), 1, nil, run, nil)
	require.NoError(t, c.Err)
	require.Equal(t, 10, c.Result)
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := q.Commit(context.Background(), i, nil, run, nil)
			if c.Err != nil || c.Result != i*10 {
				t.Errorf("caller %d got %v, %v", i, c.Result, c.Err)
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.Less(t, q.Commits(), int64(150), "batched: %v", sizes)
}

// TestAQueuedCallerLeavesWhenItsContextEnds: a caller still queued when
// its context ends leaves (never committed); the queue goes on.
func TestAQueuedCallerLeavesWhenItsContextEnds(t *testing.T) {
	var q Queue[string]
	release := make(chan struct{})
	running := make(chan struct{})
	first := make(chan struct{})
	go func() {
		defer close(first)
		q.Commit(context.Background(), "slow", nil, func(batch []*Call[string]) {
			close(running)
			<-release
			answerAll(batch)
		}, nil)
	}()
	<-running
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan *Call[string])
	go func() {
		left <- q.Commit(ctx, "impatient", nil, func([]*Call[string]) { t.Error("a caller that left was committed") }, func(err error) error { return err })
	}()
	waitQueued(t, &q, 1)
	cancel()
	require.ErrorIs(t, (<-left).Err, context.Canceled)
	close(release)
	<-first
	c := q.Commit(context.Background(), "next", nil, answerAll[string], nil)
	require.NoError(t, c.Err, "the queue goes on")
}

// TestAPanickingCommitAnswersEveryone: the callers of a batch whose
// commit panicked are answered ErrUnanswered, and the queue goes on.
func TestAPanickingCommitAnswersEveryone(t *testing.T) {
	var q Queue[int]
	started := make(chan struct{})
	release := make(chan struct{})
	first := make(chan struct{})
	go func() {
		defer close(first)
		q.Commit(context.Background(), 0, nil, func(batch []*Call[int]) { close(started); <-release; answerAll(batch) }, nil)
	}()
	<-started
	boom := func([]*Call[int]) { panic("boom") }
	leader, follower := make(chan error, 1), make(chan error, 1)
	go func() {
		defer func() {
			if recover() != nil {
				leader <- ErrUnanswered // the panic is its own caller's
			}
		}()
		leader <- q.Commit(context.Background(), 1, nil, boom, nil).Err
	}()
	waitQueued(t, &q, 1) // the leader first: the panic is its own
	go func() { follower <- q.Commit(context.Background(), 2, nil, boom, nil).Err }()
	waitQueued(t, &q, 2)
	close(release)
	<-first
	for _, ch := range []chan error{leader, follower} {
		select {
		case err := <-ch:
			require.True(t, errors.Is(err, ErrUnanswered), "%v", err)
		case <-time.After(5 * time.Second):
			t.Fatal("a caller of a panicking commit was never answered")
		}
	}
	c := q.Commit(context.Background(), 3, nil, answerAll[int], nil)
	require.NoError(t, c.Err, "the queue goes on")
}

// waitQueued waits until n calls wait in the queue behind the running batch.
func waitQueued[T any](t *testing.T, q *Queue[T], n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.queue) == n
	}, 10*time.Second, time.Millisecond, "%d calls queued", n)
}
