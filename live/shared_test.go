package live

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestSharedEncodesOncePerSelection(t *testing.T) {
	s := Single(capstan.OperationEvent{Sequence: 7})
	var encodes atomic.Int32
	encode := func(out string) func() []byte {
		return func() []byte { encodes.Add(1); return []byte(out) }
	}
	var wg sync.WaitGroup
	got := make([]string, 64)
	for i := range got {
		wg.Go(func() {
			key := "a"
			if i%2 == 1 {
				key = "b"
			}
			got[i] = string(s.Encoded(key, encode(key+"-bytes")))
		})
	}
	wg.Wait()
	require.EqualValues(t, 2, encodes.Load(), "one encoding per selection key, however many subscribers")
	for i, g := range got {
		want := "a-bytes"
		if i%2 == 1 {
			want = "b-bytes"
		}
		require.Equal(t, want, g)
	}
}

func TestSharedEncodingThatCannotBeSharedIsRedoneByEachSubscriber(t *testing.T) {
	s := Single(capstan.OperationEvent{Sequence: 7})
	var encodes atomic.Int32
	for range 3 {
		require.Nil(t, s.Encoded("k", func() []byte { encodes.Add(1); return nil }))
	}
	require.EqualValues(t, 3, encodes.Load(), "a result with errors is each subscriber's own")
	require.Equal(t, "x", string(s.Encoded("", func() []byte { return []byte("x") })), "no key: nothing shared")
}

func TestPublishedEventsAreSharedBySubscribers(t *testing.T) {
	m := Message{Events: []capstan.OperationEvent{{Sequence: 1}, {Sequence: 2}}}
	require.NotSame(t, m.shared(0), m.shared(0), "an unpublished message shares nothing")
	m.events = share(m.Events, nil)
	require.Same(t, m.shared(1), m.shared(1))
	require.Same(t, &m.Events[1], m.shared(1).Event)
}

func TestSharedKeepsABoundedNumberOfEncodings(t *testing.T) {
	s := Single(capstan.OperationEvent{Sequence: 7})
	var encodes atomic.Int32
	encode := func() []byte { encodes.Add(1); return []byte("x") }
	for i := range maxEncodings + 2 {
		for range 2 {
			s.Encoded(string(rune('a'+i)), encode)
		}
	}
	require.Len(t, s.encodings, maxEncodings, "what an event keeps is bounded")
	require.EqualValues(t, maxEncodings+2*2, encodes.Load(), "past the bound, each subscriber encodes for itself")
}
