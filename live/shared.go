package live

import (
	"sync"
	"sync/atomic"

	"github.com/capstan-dev/capstan"
)

// Shared is one timeline event as every live subscriber of its operation
// receives it. Subscribers whose subscriptions select the same fields
// would each encode the same bytes; Shared lets the first one encode the
// event and the rest reuse its encoding (Encoded). With thousands of
// dashboards on one operation, encoding once per selection instead of
// once per subscriber is most of what fan-out costs.
//
// A Shared and its Event are read by many goroutines: never change them.
type Shared struct {
	Event *capstan.OperationEvent

	counts    *EncodingCounts // nil for an event no one shares
	alone     bool            // read from the store for one subscriber (Stored)
	mu        sync.Mutex
	encodings []*encoding
}

// EncodingCounts counts, for metrics, the encodings of shared events
// subscribers made and those they reused, and the events a subscriber
// read from the store and encoded alone (Stored).
type EncodingCounts struct {
	Made, Reused, Alone atomic.Int64
}

// encoding is one selection's bytes for an event; done closes once data
// is set (nil when the encoder could not share its result).
type encoding struct {
	key  string
	done chan struct{}
	data []byte
}

// Single wraps an event no other subscriber shares (one read from the
// store while replaying).
func Single(e capstan.OperationEvent) *Shared { return &Shared{Event: &e} }

// Stored wraps an event a feed read from the store for its subscriber
// alone: one the broker no longer held, or one committed but not yet
// published when the feed filled a gap. Its encoding is counted as Alone.
func Stored(e capstan.OperationEvent, counts *EncodingCounts) *Shared {
	return &Shared{Event: &e, counts: counts, alone: true}
}

// share wraps a message's events for its subscribers.
func share(events []capstan.OperationEvent, counts *EncodingCounts) []Shared {
	s := make([]Shared, len(events))
	for i := range events {
		s[i].Event, s[i].counts = &events[i], counts
	}
	return s
}

// maxEncodings bounds the selections an event keeps an encoding for: the
// broker keeps recent events (recent.go), and a client must not grow them
// by asking for ever new selections. Past it, a subscriber encodes for
// itself.
const maxEncodings = 4

// Encoded returns the encoding of the event for the selection key: the
// first caller for a key runs encode and the others wait for its bytes.
// encode returns nil when its result must not be shared (it carries
// errors); a waiter then runs its own encode, as does every caller with an
// empty key. The bytes returned are shared: never change them.
func (s *Shared) Encoded(key string, encode func() []byte) []byte {
	if s.alone {
		s.counts.Alone.Add(1)
		return encode()
	}
	if key == "" {
		return encode()
	}
	s.mu.Lock()
	for _, e := range s.encodings {
		if e.key == key {
			s.mu.Unlock()
			<-e.done
			if e.data != nil {
				if s.counts != nil {
					s.counts.Reused.Add(1)
				}
				return e.data
			}
			return encode()
		}
	}
	if len(s.encodings) >= maxEncodings {
		s.mu.Unlock()
		return encode()
	}
	e := &encoding{key: key, done: make(chan struct{})}
	s.encodings = append(s.encodings, e)
	s.mu.Unlock()
	defer close(e.done) // even if encode panics: waiters encode for themselves
	e.data = encode()
	if s.counts != nil && e.data != nil {
		s.counts.Made.Add(1)
	}
	return e.data
}
