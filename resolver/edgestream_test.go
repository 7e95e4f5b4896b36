package resolver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/live"
)

func event(seq int64) *live.Shared { return live.Single(capstan.OperationEvent{Sequence: seq}) }

func TestEdgeStreamWithoutTransportHandsEventsToTheExecutor(t *testing.T) {
	s := newEdgeStream(context.Background()) // no live.Hook: it pumps
	for i := int64(1); i <= eventBuffer; i++ {
		require.True(t, s.TrySend(event(i)))
	}
	sent := make(chan error, 1)
	go func() { sent <- s.Send(context.Background(), event(eventBuffer+1)) }()
	var got []string
	for e := range s.exec {
		got = append(got, e.Cursor)
		if len(got) == eventBuffer+1 {
			require.NoError(t, <-sent, "Send waited for room, then queued")
			s.End(nil)
		}
	}
	require.Len(t, got, eventBuffer+1, "every event, then the end")
	require.Equal(t, eventCursor(1), got[0])
	require.Equal(t, eventCursor(eventBuffer+1), got[eventBuffer])
}

func TestEdgeStreamRelayedByItsTransport(t *testing.T) {
	var signals int
	ctx, hook := live.WithHook(context.Background(), func() { signals++ })
	s := newEdgeStream(ctx)
	require.Same(t, s, hook.Relay().(*edgeStream))
	require.True(t, s.TrySend(event(1)))
	require.True(t, s.TrySend(event(2)))
	for range eventBuffer - 2 {
		require.True(t, s.TrySend(event(3)))
	}
	require.False(t, s.TrySend(event(4)), "a full buffer refuses: the feed ends the stream as overflowed")
	require.Equal(t, eventBuffer, signals)

	v, ok := s.Take()
	require.True(t, ok)
	require.EqualValues(t, 1, v.Event.Sequence)
	v, ok = s.Take() // taken but not passed: encoded by another subscriber
	require.True(t, ok)
	require.EqualValues(t, 2, v.Event.Sequence)
	s.Pass()
	require.Equal(t, eventCursor(2), (<-s.exec).Cursor)
	for range eventBuffer - 2 {
		_, ok = s.Take()
		require.True(t, ok)
	}
	require.Nil(t, s.queue, "an idle stream keeps no buffer")

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	require.NoError(t, s.Send(ctx, event(5)))
	s.End(nil)
	_, ok = s.Take()
	require.True(t, ok)
	_, ok = s.Take()
	require.False(t, ok, "the end")
	_, open := <-s.exec
	require.False(t, open, "the executor reads the end")
}
