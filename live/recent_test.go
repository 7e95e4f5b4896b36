package live

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// published builds a message of an operation with events of the given
// sequences.
func published(status capstan.OperationStatus, seq ...int64) Message {
	m := Message{Org: "o", Operation: capstan.Operation{Meta: capstan.Meta{ID: "op"}, Status: status}}
	for _, s := range seq {
		m.Events = append(m.Events, capstan.OperationEvent{Sequence: s, Type: "x"})
	}
	return m
}

func TestBrokerKeepsAnOperationsRecentEvents(t *testing.T) {
	running, ended := capstan.OperationRunning, capstan.OperationSucceeded
	for _, tc := range []struct {
		name      string
		publish   []Message
		after     int64
		want      []int64 // nil: the feed must read the store
		kept, ops int
	}{
		{name: "every event after the cursor", publish: []Message{published(running, 1, 2), published(running, 3)},
			after: 0, want: []int64{1, 2, 3}, kept: 3, ops: 1},
		{name: "from the middle", publish: []Message{published(running, 1, 2, 3)}, after: 2, want: []int64{3}, kept: 3, ops: 1},
		{name: "caught up: nothing to take", publish: []Message{published(running, 1, 2)}, after: 2, kept: 2, ops: 1},
		{name: "a late publish is skipped", publish: []Message{published(running, 1, 2), published(running, 2)},
			after: 0, want: []int64{1, 2}, kept: 2, ops: 1},
		{name: "a gap starts the run again", publish: []Message{published(running, 1, 2), published(running, 5, 6)},
			after: 4, want: []int64{5, 6}, kept: 2, ops: 1},
		{name: "a cursor before the run reads the store", publish: []Message{published(running, 1, 2), published(running, 5, 6)},
			after: 2, kept: 2, ops: 1},
		{name: "a run that starts late", publish: []Message{published(running, 40, 41)}, after: 0, kept: 2, ops: 1},
		{name: "a finished operation is dropped", publish: []Message{published(running, 1), published(ended, 2)}, after: 0, ops: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBroker(0)
			for _, m := range tc.publish {
				b.Publish(m)
			}
			var got []int64
			for _, e := range b.recentAfter(operationKey("o", "op"), tc.after) {
				got = append(got, e.Event.Sequence)
			}
			require.Equal(t, tc.want, got)
			require.Len(t, b.recent, tc.ops)
			if tc.ops > 0 {
				require.Len(t, b.recent[operationKey("o", "op")].events, tc.kept)
			}
		})
	}
}

func TestBrokerBoundsWhatItKeeps(t *testing.T) {
	b := NewBroker(0)
	for s := int64(1); s <= recentPerOperation+10; s++ {
		b.Publish(published(capstan.OperationRunning, s))
	}
	r := b.recent[operationKey("o", "op")]
	require.Len(t, r.events, recentPerOperation)
	require.Equal(t, int64(11), r.events[0].Event.Sequence, "the oldest go first")
	require.Nil(t, b.recentAfter(operationKey("o", "op"), 9), "older than what is kept: the store")
	require.Len(t, b.recentAfter(operationKey("o", "op"), 10), recentPerOperation)

	for range recentOperations + 5 {
		m := published(capstan.OperationRunning, 1)
		m.Operation.ID = capstan.NewID()
		b.Publish(m)
	}
	require.Len(t, b.recent, recentOperations, "operations beyond the bound read the store")
}

// sharedRecorder is an Out that keeps the events themselves.
type sharedRecorder struct {
	recorder
	events []*Shared
}

func (r *sharedRecorder) Send(ctx context.Context, e *Shared) error {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	return r.recorder.Send(ctx, e)
}

func (r *sharedRecorder) TrySend(e *Shared) bool {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	return r.recorder.TrySend(e)
}

// A feed catching up shares the published events (and so their
// encodings) instead of reading them, and still reads the store after
// them: an event committed but never published here is not missed.
func TestFeedCatchesUpFromRecentEventsThenTheStore(t *testing.T) {
	b := NewBroker(0)
	tl := &timeline{}
	b.Publish(Message{Org: "o", Operation: capstan.Operation{Meta: capstan.Meta{ID: "op"}, Status: capstan.OperationRunning}, Events: tl.add(3)})
	tl.add(2) // committed, never published (another process)
	tl.ended = true
	var wg sync.WaitGroup
	outs := make([]*sharedRecorder, 3)
	for i := range outs {
		outs[i] = &sharedRecorder{recorder: recorder{room: -1, ended: make(chan error, 1)}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			StartFeed(context.Background(), b, "o", "op", tl, 1, outs[i])
		}()
	}
	wg.Wait()
	for _, out := range outs {
		got, err := out.wait(t)
		require.NoError(t, err)
		require.Equal(t, seqs(2, 5), got)
		require.Same(t, outs[0].events[0], out.events[0], "one shared copy of a recent event")
		require.Same(t, outs[0].events[1], out.events[1])
	}
	requireNoSubscribers(t, b)
}
