package live

import "slices"

// Recent events. The broker keeps the latest events it published of each
// unfinished operation, so that subscribers catching up — a dashboard
// opening on a running operation, every client reconnecting after a
// network drop — share one copy of each event and its encodings instead of
// each reading the store and encoding what it read. The store stays the
// source of truth: a feed takes from here only a run of events that
// continues right after its cursor, and then still reads the store after
// them (usually nothing), so an event committed but never published here
// (another process, a commit whose acknowledgement was lost) is not missed.
//
// What it holds is bounded: at most 128 events of each of 256 operations
// (32,768 events), each with at most maxEncodings encodings.
const (
	// recentPerOperation bounds the events kept per operation.
	recentPerOperation = 128
	// recentOperations bounds the operations whose events are kept.
	recentOperations = 256
)

// recent is one operation's latest published events, consecutive by
// sequence, oldest first.
type recent struct {
	events []*Shared
}

// remember adds a published message's events to its operation's recent
// events (b.mu held). An event that does not follow the last one kept
// starts the run again; the run of a finished operation is dropped (a feed
// of a finished operation reads the store).
func (b *Broker) remember(key string, m *Message) {
	if m.Operation.Status.Terminal() {
		delete(b.recent, key)
		return
	}
	r := b.recent[key]
	if r == nil {
		if len(b.recent) >= recentOperations {
			return
		}
		r = &recent{}
		b.recent[key] = r
	}
	for i := range m.events {
		e := &m.events[i]
		if n := len(r.events); n > 0 {
			last := r.events[n-1].Event.Sequence
			switch {
			case e.Event.Sequence <= last:
				continue // published late: the run has it, or has moved past it
			case e.Event.Sequence != last+1:
				clear(r.events)
				r.events = r.events[:0]
			}
		}
		r.events = append(r.events, e)
		if n := len(r.events); n > recentPerOperation {
			copy(r.events, r.events[n-recentPerOperation:])
			clear(r.events[recentPerOperation:])
			r.events = r.events[:recentPerOperation]
		}
	}
}

// recentAfter returns the kept events of an operation that continue right
// after the cursor, or nil when the run does not start at or before it.
func (b *Broker) recentAfter(key string, after int64) []*Shared {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.recent[key]
	if r == nil || len(r.events) == 0 {
		return nil
	}
	first := r.events[0].Event.Sequence
	if after+1 < first || after >= r.events[len(r.events)-1].Event.Sequence {
		return nil
	}
	return slices.Clone(r.events[after+1-first:])
}
