// Package live carries committed operation changes to live subscribers.
//
// The store stays the source of truth: a commit publishes what it wrote to
// the in-process Broker, which fans it out to subscriptions without ever
// blocking the writer; a subscription replays from the store first and
// fills any gap from it, so a subscriber sees every event exactly once.
package live

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capstan-dev/capstan"
)

// DefaultBuffer is how many messages a subscription may fall behind
// before it overflows.
const DefaultBuffer = 256

// Message is one committed change of an operation: the operation as it
// was committed and the timeline events of the change, in order.
type Message struct {
	Org       string
	Operation capstan.Operation
	Events    []capstan.OperationEvent
	// events wraps Events for the subscribers (Publish), so they encode
	// each event once per selection.
	events []Shared
}

// shared returns event i as subscribers share it.
func (m *Message) shared(i int) *Shared {
	if m.events == nil {
		return Single(m.Events[i]) // a message that was not published
	}
	return &m.events[i]
}

// ListChanged reports whether the change moves what a list of
// operations shows: its status, or what needs a person — a gate waiting
// or decided, a patch proposed or closed, a node that needs attention.
// Node progress is not (an operation's own subscriptions carry it): the
// organization's subscribers would otherwise get every event of every
// operation.
func (m *Message) ListChanged() bool {
	for _, e := range m.Events {
		if ListEvent(e.Type) {
			return true
		}
	}
	return false
}

// ListEvent says whether an event of this type changes what a list of
// operations shows (ListChanged).
func ListEvent(typ string) bool {
	switch {
	case strings.HasPrefix(typ, "operation."), strings.HasPrefix(typ, "gate."), strings.HasPrefix(typ, "patch."):
		return true
	}
	return typ == "node.needs_attention" || typ == EventResourceAssessed
}

// EventResourceAssessed is the event of a health assessment that changed
// a resource's health (or one a person asked for; observe.Assessor writes it): organization subscribers
// get it, for the resourceHealth stream.
const EventResourceAssessed = "resource.assessed"

// OnlyAssessments reports whether m carries nothing but assessments (the
// operations list has nothing to show for it).
func (m *Message) OnlyAssessments() bool {
	for _, e := range m.Events {
		if e.Type != EventResourceAssessed {
			return false
		}
	}
	return len(m.Events) > 0
}

// Broker fans messages out to subscriptions by operation and by
// organization. Publish never blocks: a subscription whose buffer is full
// is ended as overflowed, never silently skipped.
type Broker struct {
	mu     sync.Mutex
	byOp   map[string]map[*Subscription]struct{}
	byOrg  map[string]map[*Subscription]struct{}
	buffer int
	closed bool
	recent map[string]*recent // by operation: recent.go
	// seen marks what was published of each operation (seen.go).
	seen map[string]*seen
	// statuses is each unfinished operation's last published status: a
	// change that moves it without an operation.* event (a retry or an
	// intervention resuming a waiting operation) still reaches the lists.
	statuses map[string]capstan.OperationStatus
	// Published counts messages published; Overflows counts subscriptions
	// ended because they fell behind (for metrics).
	Published, Overflows atomic.Int64
	// Replays counts feeds replaying from the store now (a feed not
	// replaying is live: the publish hands it each event).
	Replays atomic.Int64
	// Encodings counts how subscribers encoded the published events:
	// made once per selection, reused by the others.
	Encodings EncodingCounts
}

// NewBroker returns a broker whose subscriptions buffer up to buffer
// messages (DefaultBuffer when 0).
func NewBroker(buffer int) *Broker {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return &Broker{byOp: map[string]map[*Subscription]struct{}{}, byOrg: map[string]map[*Subscription]struct{}{}, buffer: buffer,
		recent: map[string]*recent{}, seen: map[string]*seen{}, statuses: map[string]capstan.OperationStatus{}}
}

// Subscription receives messages on C until it is closed: by its owner
// (Close), by overflow (Overflowed), or by the broker shutting down. A
// message is shared by every subscription it reaches: read it, never
// change it.
type Subscription struct {
	C          <-chan *Message
	c          chan *Message
	b          *Broker
	topic      map[string]map[*Subscription]struct{}
	key        string
	overflowed bool // written under b.mu before c is closed
	// fn, for a callback subscription, receives messages inside Publish
	// (it must not wait) and reports whether it wants more; nil on shutdown.
	fn func(*Message) bool
}

// Overflowed reports whether the subscription ended because it fell
// behind; read it after C is closed.
func (s *Subscription) Overflowed() bool {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.overflowed
}

// Renew subscribes again to the same topic (after an overflow, for a
// subscriber that only needs the newest state).
func (s *Subscription) Renew() *Subscription {
	return s.b.subscribe(s.topic, s.key)
}

// Close ends the subscription; it is safe to call more than once.
func (s *Subscription) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.drop(s)
}

// drop removes and closes s; b.mu is held.
func (b *Broker) drop(s *Subscription) {
	subs := s.topic[s.key]
	if _, ok := subs[s]; !ok {
		return
	}
	delete(subs, s)
	if len(subs) == 0 {
		delete(s.topic, s.key)
	}
	if s.c != nil {
		close(s.c)
	}
}

// operationKey names an operation in the broker's maps.
func operationKey(org, opID string) string { return org + "|" + opID }

// Operation subscribes to the changes of one operation.
func (b *Broker) Operation(org, opID string) *Subscription {
	return b.subscribe(b.byOp, operationKey(org, opID))
}

// Organization subscribes to the status changes of every operation of an
// organization.
func (b *Broker) Organization(org string) *Subscription {
	return b.subscribe(b.byOrg, org)
}

// operationFunc subscribes a callback to an operation's changes (Feed).
// key is the operation's (operationKey).
func (b *Broker) operationFunc(key string, fn func(*Message) bool) *Subscription {
	s := &Subscription{b: b, topic: b.byOp, key: key, fn: fn}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		fn(nil)
		return s
	}
	b.add(s)
	return s
}

func (b *Broker) add(s *Subscription) {
	if s.topic[s.key] == nil {
		s.topic[s.key] = map[*Subscription]struct{}{}
	}
	s.topic[s.key][s] = struct{}{}
}

func (b *Broker) subscribe(topic map[string]map[*Subscription]struct{}, key string) *Subscription {
	c := make(chan *Message, b.buffer)
	s := &Subscription{C: c, c: c, b: b, topic: topic, key: key}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(c)
		return s
	}
	b.add(s)
	return s
}

// Publish delivers a committed change to its subscriptions.
// An event published already (by the other path: a commit here and the
// tailer's read of it) is not delivered again.
func (b *Broker) Publish(m Message) {
	key := operationKey(m.Org, m.Operation.ID)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.markPublished(key, &m) {
		return
	}
	if n := b.Published.Add(1); n%1024 == 0 {
		b.forget(time.Now().Add(-forgetAfter))
	}
	m.events = share(m.Events, &b.Encodings)
	b.remember(key, &m)
	b.deliver(b.byOp[key], &m)
	last, known := b.statuses[key]
	if m.Operation.Status.Terminal() {
		delete(b.statuses, key)
	} else {
		b.statuses[key] = m.Operation.Status
	}
	if m.ListChanged() || !known || last != m.Operation.Status {
		b.deliver(b.byOrg[m.Org], &m)
	}
}

func (b *Broker) deliver(subs map[*Subscription]struct{}, m *Message) {
	for s := range subs {
		if s.fn != nil {
			if !s.fn(m) {
				b.drop(s)
			}
			continue
		}
		select {
		case s.c <- m:
		default:
			s.overflowed = true
			b.Overflows.Add(1)
			b.drop(s)
		}
	}
}

// Subscribers counts open subscriptions (for metrics and leak tests).
func (b *Broker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, subs := range b.byOp {
		n += len(subs)
	}
	for _, subs := range b.byOrg {
		n += len(subs)
	}
	return n
}

// Close ends every subscription (server shutdown): their streams complete.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, topic := range []map[string]map[*Subscription]struct{}{b.byOp, b.byOrg} {
		for _, subs := range topic {
			for s := range subs {
				if s.fn != nil {
					s.fn(nil)
				}
				b.drop(s)
			}
		}
	}
}
