package live

import (
	"context"
	"errors"
	"sync"
	"testing"

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

func collect(got *[]int64) func(capstan.OperationEvent) error {
	return func(e capstan.OperationEvent) error {
		*got = append(*got, e.Sequence)
		return nil
	}
}

func seqs(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestFollowReplaysThenGoesLiveAndFillsGaps(t *testing.T) {
	b := NewBroker(0)
	tl := &timeline{}
	tl.add(700) // more than one replay page
	sub := b.Operation("o", "op")
	running := capstan.Operation{Meta: capstan.Meta{ID: "op"}, Status: capstan.OperationRunning}
	// Published before Follow reads: already replayed, must not repeat.
	b.Publish(Message{Org: "o", Operation: running, Events: tl.add(2)})
	// A change committed but not seen live (another process): a gap.
	tl.add(3)
	b.Publish(Message{Org: "o", Operation: running, Events: tl.add(1)})
	ended := running
	ended.Status = capstan.OperationSucceeded
	b.Publish(Message{Org: "o", Operation: ended, Events: tl.add(2)})
	var got []int64
	require.NoError(t, Follow(context.Background(), tl, sub, 5, collect(&got)))
	require.Equal(t, seqs(6, 708), got, "from the cursor on, each once, in order")
}

func TestFollowAnEndedOperationOnlyReplays(t *testing.T) {
	b := NewBroker(0)
	tl := &timeline{ended: true}
	tl.add(4)
	var got []int64
	require.NoError(t, Follow(context.Background(), tl, b.Operation("o", "op"), 0, collect(&got)))
	require.Equal(t, seqs(1, 4), got)
}

func TestOverflowEndsTheSubscriptionWithItsCursor(t *testing.T) {
	b := NewBroker(2)
	tl := &timeline{}
	sub := b.Operation("o", "op")
	other := b.Operation("o", "op")
	running := capstan.Operation{Meta: capstan.Meta{ID: "op"}, Status: capstan.OperationRunning}
	for range 3 { // the third does not fit: both overflow, the publisher never blocks
		b.Publish(Message{Org: "o", Operation: running, Events: tl.add(1)})
	}
	var got []int64
	err := Follow(context.Background(), &timeline{}, sub, 0, collect(&got))
	var over *OverflowError
	require.True(t, errors.As(err, &over), "%v", err)
	require.Equal(t, []int64{1, 2}, got, "what was buffered is delivered")
	require.Equal(t, int64(2), over.Cursor)
	require.True(t, other.Overflowed())
	require.Zero(t, b.Subscribers())
}

func TestOrganizationSubscribersSeeOnlyStatusChanges(t *testing.T) {
	b := NewBroker(0)
	org := b.Organization("o")
	foreign := b.Organization("p")
	op := capstan.Operation{Meta: capstan.Meta{ID: "op"}, Status: capstan.OperationRunning}
	b.Publish(Message{Org: "o", Operation: op, Events: []capstan.OperationEvent{{Type: "node.running"}}})
	b.Publish(Message{Org: "o", Operation: op, Events: []capstan.OperationEvent{{Type: "operation.running"}}})
	b.Close()
	var n int
	for range org.C {
		n++
	}
	require.Equal(t, 1, n)
	_, open := <-foreign.C
	require.False(t, open)
	require.False(t, org.Overflowed(), "closed by shutdown, not overflow")
}
