package live

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// timeline is a Source over an in-memory timeline.
type timeline struct {
	mu     sync.Mutex
	events []capstan.OperationEvent
	ended  bool
}

func (tl *timeline) add(n int) []capstan.OperationEvent {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []capstan.OperationEvent
	for range n {
		e := capstan.OperationEvent{Sequence: int64(len(tl.events) + 1), Type: "x"}
		tl.events = append(tl.events, e)
		out = append(out, e)
	}
	return out
}

func (tl *timeline) Events(_ context.Context, after int64, limit int) ([]capstan.OperationEvent, error) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []capstan.OperationEvent
	for _, e := range tl.events {
		if e.Sequence > after && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (tl *timeline) Terminal(context.Context) (bool, error) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.ended, nil
}

// recorder is an Out that records what it received.
type recorder struct {
	mu    sync.Mutex
	got   []int64
	room  int // how many TrySend accepts (-1: unlimited)
	ended chan error
}

func newRecorder(room int) *recorder { return &recorder{room: room, ended: make(chan error, 1)} }

func (r *recorder) TrySend(e *Shared) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.room == 0 {
		return false
	}
	r.room--
	r.got = append(r.got, e.Event.Sequence)
	return true
}

func (r *recorder) Send(_ context.Context, e *Shared) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, e.Event.Sequence)
	return nil
}

func (r *recorder) End(err error) { r.ended <- err }

func (r *recorder) wait(t *testing.T) ([]int64, error) {
	t.Helper()
	select {
	case err := <-r.ended:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.got, err
	case <-time.After(10 * time.Second):
		t.Fatal("the feed did not end")
		return nil, nil
	}
}

func seqs(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestFeedReplaysThenGoesLiveAndFillsGaps(t *testing.T) {
	b := NewBroker(0)
	tl := &timeline{}
	tl.add(700) // more than one replay page
	out := newRecorder(-1)
	StartFeed(context.Background(), b, "o", "op", tl, 5, out)
	running := capstan.Operation{Meta: capstan.Meta{ID: "op"}, Status: capstan.OperationRunning}
	b.Publish(Message{Org: "o", Operation: running, Events: tl.add(2)})
	tl.add(3) // committed but never published here (another process): a gap
	b.Publish(Message{Org: "o", Operation: running, Events: tl.add(1)})
	b.Publish(Message{Org: "o", Operation: running, Events: tl.add(1)})
	ended := running
	ended.Status = capstan.OperationSucceeded
	b.Publish(Message{Org: "o", Operation: ended, Events: tl.add(2)})
	got, err := out.wait(t)
	require.NoError(t, err)
	require.Equal(t, seqs(6, 709), got, "from the cursor on, each once, in order")
	requireNoSubscribers(t, b)
}

func TestFeedOfAnEndedOperationOnlyReplays(t *testing.T) {
	b := NewBroker(0)
	tl := &timeline{ended: true}
	tl.add(4)
	out := newRecorder(-1)
	StartFeed(context.Background(), b, "o", "op", tl, 0, out)
	got, err := out.wait(t)
	require.NoError(t, err)
	require.Equal(t, seqs(1, 4), got)
}

func TestFeedOverflowEndsTheStreamWithItsCursor(t *testing.T) {
	b := NewBroker(0)
	tl := &timeline{}
	tl.add(1)
	out := newRecorder(2) // room for two live events, then full
	StartFeed(context.Background(), b, "o", "op", tl, 0, out)
	require.Eventually(t, func() bool { // replayed, now live
		out.mu.Lock()
		defer out.mu.Unlock()
		return len(out.got) == 1
	}, 5*time.Second, time.Millisecond)
	running := capstan.Operation{Meta: capstan.Meta{ID: "op"}, Status: capstan.OperationRunning}
	for range 4 {
		b.Publish(Message{Org: "o", Operation: running, Events: tl.add(1)})
	}
	got, err := out.wait(t)
	var over *OverflowError
	require.True(t, errors.As(err, &over), "%v", err)
	require.Equal(t, []int64{1, 2, 3}, got, "what fit was delivered")
	require.Equal(t, int64(3), over.Cursor, "resume after the last delivered")
	requireNoSubscribers(t, b)
}

func TestFeedEndsWhenTheSubscriberLeavesOrTheBrokerCloses(t *testing.T) {
	b := NewBroker(0)
	ctx, cancel := context.WithCancel(context.Background())
	left := newRecorder(-1)
	StartFeed(ctx, b, "o", "a", &timeline{}, 0, left)
	stays := newRecorder(-1)
	StartFeed(context.Background(), b, "o", "b", &timeline{}, 0, stays)
	require.Eventually(t, func() bool { return b.Subscribers() == 2 }, 5*time.Second, time.Millisecond)
	cancel()
	_, err := left.wait(t)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return b.Subscribers() == 1 }, 5*time.Second, time.Millisecond)
	b.Close()
	_, err = stays.wait(t)
	require.NoError(t, err, "shutdown completes the stream")
}

func TestListEvents(t *testing.T) {
	for typ, want := range map[string]bool{
		"operation.running": true, "operation.succeeded": true, "gate.waiting": true, "gate.decided": true, "gate.approved": true,
		"patch.proposed": true, "patch.applied": true, "patch.stale": true, "node.needs_attention": true,
		"node.running": false, "node.succeeded": false, "evidence.recorded": false, "resource.changing": false, "plan.revised": false,
	} {
		require.Equal(t, want, ListEvent(typ), typ)
	}
}

func TestOrganizationSubscribersSeeOnlyListChanges(t *testing.T) {
	b := NewBroker(0)
	org := b.Organization("o")
	foreign := b.Organization("p")
	op := capstan.Operation{Meta: capstan.Meta{ID: "op"}, Status: capstan.OperationRunning}
	b.Publish(Message{Org: "o", Operation: op, Events: []capstan.OperationEvent{{Type: "node.running"}}})
	b.Publish(Message{Org: "o", Operation: op, Events: []capstan.OperationEvent{{Type: "operation.running"}}})
	b.Publish(Message{Org: "o", Operation: op, Events: []capstan.OperationEvent{{Type: "evidence.recorded"}, {Type: "patch.proposed"}}})
	waiting := op
	waiting.Status = capstan.OperationWaiting
	b.Publish(Message{Org: "o", Operation: waiting, Events: []capstan.OperationEvent{{Type: "gate.waiting"}}})
	b.Publish(Message{Org: "o", Operation: op, Events: []capstan.OperationEvent{{Type: "node.retry_requested"}}})
	b.Publish(Message{Org: "o", Operation: op, Events: []capstan.OperationEvent{{Type: "node.succeeded"}}})
	b.Close()
	var n int
	for range org.C {
		n++
	}
	require.Equal(t, 5, n, "the first sight of the operation, the status change, the patch proposal, the gate, the retry that resumed it; not node progress")
	_, open := <-foreign.C
	require.False(t, open)
	require.False(t, org.Overflowed(), "closed by shutdown, not overflow")
}

// requireNoSubscribers waits for the broker to drop a feed that ended: a
// feed ends inside a publish, and the broker drops it when that returns.
func requireNoSubscribers(t *testing.T, b *Broker) {
	t.Helper()
	require.Eventually(t, func() bool { return b.Subscribers() == 0 }, 5*time.Second, time.Millisecond)
}

// The subscribers of an operation's final change leave while the broker
// may still be delivering it to others: a feed that already ended must
// not wait for the broker's lock then (10,000 of them queued on it).
func TestEndedFeedLeavesWithoutTheBrokersLock(t *testing.T) {
	b := NewBroker(0)
	tl := &timeline{}
	out := newRecorder(-1)
	ctx, leave := context.WithCancel(context.Background())
	f := StartFeed(ctx, b, "o", "op", tl, 0, out)
	require.Eventually(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return !f.replay }, 5*time.Second, time.Millisecond)
	ended := capstan.Operation{Meta: capstan.Meta{ID: "op"}, Status: capstan.OperationSucceeded}
	b.Publish(Message{Org: "o", Operation: ended, Events: tl.add(1)})
	got, err := out.wait(t)
	require.NoError(t, err)
	require.Equal(t, []int64{1}, got)

	b.mu.Lock() // another publish in progress
	left := make(chan struct{})
	go func() { leave(); f.stop(); close(left) }()
	select {
	case <-left:
	case <-time.After(5 * time.Second):
		t.Fatal("an ended feed waited for the broker's lock to leave")
	}
	b.mu.Unlock()
	requireNoSubscribers(t, b)
}

// flakySource answers UNAVAILABLE a number of times before it reads (a
// database busy or restarting for a moment), or always with another code.
type flakySource struct {
	*timeline
	mu       sync.Mutex
	failures int
	code     string
}

func (f *flakySource) Events(ctx context.Context, after int64, limit int) ([]capstan.OperationEvent, error) {
	f.mu.Lock()
	if f.failures != 0 {
		f.failures--
		f.mu.Unlock()
		return nil, capstan.Errorf(f.code, "neo4j is not reachable; try again")
	}
	f.mu.Unlock()
	return f.timeline.Events(ctx, after, limit)
}

// TestAFeedRidesOutAStoreHiccup: a replay read that answers UNAVAILABLE a
// few times is read again (the subscriber sees nothing of it); one that
// keeps failing, or fails otherwise, ends the stream with the error.
func TestAFeedRidesOutAStoreHiccup(t *testing.T) {
	for _, c := range []struct {
		name     string
		failures int
		code     string
		ends     string
	}{
		{"a hiccup", 3, capstan.EUNAVAILABLE, ""},
		{"an outage", -1, capstan.EUNAVAILABLE, capstan.EUNAVAILABLE},
		{"another failure", 1, capstan.EINTERNAL, capstan.EINTERNAL},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl := &timeline{ended: true}
			tl.add(3)
			out := newRecorder(-1)
			StartFeed(context.Background(), NewBroker(0), "o", "op", &flakySource{timeline: tl, failures: c.failures, code: c.code}, 0, out)
			got, err := out.wait(t)
			if c.ends == "" {
				require.NoError(t, err)
				require.Equal(t, seqs(1, 3), got)
				return
			}
			require.Equal(t, c.ends, capstan.ErrorCode(err))
		})
	}
}
