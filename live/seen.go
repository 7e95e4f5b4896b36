package live

import (
	"time"
)

// What this process has published of each operation: with replicas, an
// operation's events reach a process's broker two ways — its own commits
// (Store) and the tailer's reads of the others' (Tailer) — and each
// event must reach the subscribers once. The broker marks what it
// published and drops what it already did.

// seen is what was published of one operation: every sequence up to upTo,
// and those in above (beyond a gap another process's commit left).
type seen struct {
	upTo  int64
	above map[int64]struct{}
	// at is when the mark last moved: a mark idle for forgetAfter is
	// forgotten (Forget), so the map holds the operations of lately.
	at time.Time
}

func (s *seen) has(seq int64) bool {
	if seq <= s.upTo {
		return true
	}
	_, ok := s.above[seq]
	return ok
}

func (s *seen) add(seq int64) {
	if seq <= s.upTo {
		return
	}
	if seq != s.upTo+1 {
		if s.above == nil {
			s.above = map[int64]struct{}{}
		}
		s.above[seq] = struct{}{}
		return
	}
	s.upTo = seq
	s.fold()
}

// fold moves the sequences that continue upTo from above into it.
func (s *seen) fold() {
	for {
		if _, ok := s.above[s.upTo+1]; !ok {
			return
		}
		delete(s.above, s.upTo+1)
		s.upTo++
	}
}

// markPublished drops from m the events this broker published already and
// marks the rest (b.mu held). It reports whether anything is left to
// deliver: a message whose every event went out already is not sent
// again.
func (b *Broker) markPublished(key string, m *Message) bool {
	s := b.seen[key]
	if s == nil {
		s = &seen{}
		if len(m.Events) > 0 && m.Events[0].Sequence > 1 {
			// The first published here: what came before is the
			// store's to replay, not news for the tailer to bring.
			s.upTo = m.Events[0].Sequence - 1
		}
		b.seen[key] = s
	}
	s.at = time.Now()
	if len(m.Events) == 0 {
		return true
	}
	kept := m.Events[:0:0]
	for _, e := range m.Events {
		if e.Sequence <= 0 { // not stored yet: nothing to mark it by
			kept = append(kept, e)
			continue
		}
		if !s.has(e.Sequence) {
			kept = append(kept, e)
			s.add(e.Sequence)
		}
	}
	if len(kept) == len(m.Events) {
		return true
	}
	m.Events = kept
	return len(kept) > 0
}

// PublishedUpTo is the sequence up to which this broker published every
// event of an operation, and whether it knows the operation at all.
func (b *Broker) PublishedUpTo(org, opID string) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.seen[operationKey(org, opID)]
	if s == nil {
		return 0, false
	}
	return s.upTo, true
}

// Known marks an operation's events up to last as published without
// publishing them: the tailer's starting point for an operation whose
// past no subscriber here needs from it (a Feed replays from the store).
func (b *Broker) Known(org, opID string, last int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := operationKey(org, opID)
	s := b.seen[key]
	if s == nil {
		s = &seen{}
		b.seen[key] = s
	}
	s.at = time.Now()
	s.upTo = max(s.upTo, last)
	for seq := range s.above {
		if seq <= s.upTo {
			delete(s.above, seq)
		}
	}
	s.fold()
}

// Interested reports whether anyone here follows the operation or its
// organization.
func (b *Broker) Interested(org, opID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.byOp[operationKey(org, opID)]) > 0 || len(b.byOrg[org]) > 0
}

// forgetAfter is how long the mark of an operation nothing moved is
// kept: well beyond what the tailer reads again (its lookback). An
// operation moved after that is new to the tailer (it brings its latest
// commit).
const forgetAfter = 2 * DefaultTailLookback

// Forget drops the marks idle for forgetAfter (the tailer calls it now
// and then; Publish too).
func (b *Broker) Forget() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forget(time.Now().Add(-forgetAfter))
}

// forget drops the marks idle since before cutoff (b.mu held), but never
// the mark of an operation someone here follows: an operation can wait
// longer than forgetAfter (on its sub-operation, on a database coming
// back), and its followers' streams must go on from the mark, not from
// the latest commit the tailer would take it to be news of.
func (b *Broker) forget(cutoff time.Time) {
	for key, s := range b.seen {
		if s.at.Before(cutoff) && len(b.byOp[key]) == 0 {
			delete(b.seen, key)
		}
	}
}
