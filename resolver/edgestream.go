package resolver

import (
	"context"
	"sync"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/graph/model"
	"github.com/capstan-dev/capstan/internal/guard"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/resolver/events"
)

// eventBuffer is how far a subscriber may fall behind live events before
// its stream ends with OVERFLOW.
const eventBuffer = 64

// edgeStream is a subscriber's stream of timeline edges (live.Out). Its
// transport takes each event from the buffer and passes it on to the
// executor only when no other subscriber with the same selection has
// encoded it yet (live.Relay); it tells the transport after each event and
// after the end (live.Hook). The buffer is a slice, so an idle
// subscription holds none.
type edgeStream struct {
	ctx   context.Context
	exec  chan *model.OperationEventEdge // what the executor reads, one at a time
	ready func()

	mu     sync.Mutex
	queue  []*live.Shared
	ended  bool
	closed bool          // exec is closed: the executor saw the end
	room   chan struct{} // closed when an event is taken; made by a Send that waits
	taken  *live.Shared  // between Take and Pass
}

// newEdgeStream returns a stream whose transport relays it, or, with no
// transport to do so, one that hands every event to the executor itself.
func newEdgeStream(ctx context.Context) *edgeStream {
	s := &edgeStream{ctx: ctx, exec: make(chan *model.OperationEventEdge, 1), ready: live.Ready(ctx)}
	if !live.Relaying(ctx, s) {
		wake := make(chan struct{}, 1)
		s.ready = func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
		go s.pump(wake)
	}
	return s
}

func edge(e capstan.OperationEvent) *model.OperationEventEdge {
	return &model.OperationEventEdge{Cursor: eventCursor(e.Sequence), Node: events.Of(e)}
}

func (s *edgeStream) TrySend(e *live.Shared) bool { return s.push(e) == nil }

// Send waits while the buffer is full (replaying from the store).
func (s *edgeStream) Send(ctx context.Context, e *live.Shared) error {
	for {
		room := s.push(e)
		if room == nil {
			return nil
		}
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// push queues e and tells the transport; with the buffer full it queues
// nothing and returns what closes when an event is taken.
func (s *edgeStream) push(e *live.Shared) <-chan struct{} {
	s.mu.Lock()
	if len(s.queue) >= eventBuffer {
		if s.room == nil {
			s.room = make(chan struct{})
		}
		defer s.mu.Unlock()
		return s.room
	}
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	s.ready()
	return nil
}

func (s *edgeStream) End(err error) {
	streamError(s.ctx, err)
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	s.ready()
}

// next removes the oldest event. With nothing queued after End, it
// closes the executor's channel (once) and reports the end.
func (s *edgeStream) next() (v *live.Shared, end bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		if s.ended && !s.closed {
			close(s.exec)
			s.closed = true
		}
		return nil, s.ended
	}
	v = s.queue[0]
	s.queue[0] = nil
	if s.queue = s.queue[1:]; len(s.queue) == 0 {
		s.queue = nil // an idle subscription keeps no buffer
	}
	if s.room != nil {
		close(s.room)
		s.room = nil
	}
	return v, false
}

// Take implements live.Relay: the transport was signalled, and signals
// and events are one to one, so an event or the end is waiting.
func (s *edgeStream) Take() (*live.Shared, bool) {
	v, _ := s.next()
	s.taken = v
	return v, v != nil
}

// Pass implements live.Relay; the executor's channel is empty, as each
// event passed is read before the next is taken.
func (s *edgeStream) Pass() {
	s.exec <- edge(*s.taken.Event)
	s.taken = nil
}

// pump hands every event to the executor when no transport relays them.
func (s *edgeStream) pump(wake <-chan struct{}) {
	defer guard.Recover(nil, "operationEvents", func(err error) { streamError(s.ctx, err) })
	for {
		v, end := s.next()
		switch {
		case end:
			return
		case v == nil:
			select {
			case <-wake: // wake holds one signal, so none is missed meanwhile
			case <-s.ctx.Done():
				return
			}
		default:
			select {
			case s.exec <- edge(*v.Event):
			case <-s.ctx.Done():
				return
			}
		}
	}
}
