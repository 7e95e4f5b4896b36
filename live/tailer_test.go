package live

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func events(from, to int64) []capstan.OperationEvent {
	var out []capstan.OperationEvent
	for s := from; s <= to; s++ {
		out = append(out, capstan.OperationEvent{Sequence: s, Type: "node.running"})
	}
	return out
}

func sequences(m *Message) []int64 {
	var out []int64
	for _, e := range m.Events {
		out = append(out, e.Sequence)
	}
	return out
}

// TestEachEventIsPublishedOnce: an event reaches the broker twice when
// both paths carry it (a commit here and the tailer's read of it); the
// subscribers get it once. Events committed elsewhere between two of this
// process's commits are published when the tailer brings them, once.
func TestEachEventIsPublishedOnce(t *testing.T) {
	b := NewBroker(0)
	org := b.Operation("o", "op")
	op := capstan.Operation{Meta: capstan.Meta{ID: "op"}, Status: capstan.OperationRunning}
	b.Publish(Message{Org: "o", Operation: op, Events: events(1, 2)})
	b.Publish(Message{Org: "o", Operation: op, Events: events(1, 3)}) // the tailer's read: only 3 is new
	b.Publish(Message{Org: "o", Operation: op, Events: events(6, 6)}) // committed here after 4 and 5 elsewhere
	upTo, known := b.PublishedUpTo("o", "op")
	require.True(t, known)
	require.Equal(t, int64(3), upTo, "4 and 5 are not published yet")
	b.Publish(Message{Org: "o", Operation: op, Events: events(4, 6)}) // the tailer brings 4..6: 6 went out already
	upTo, _ = b.PublishedUpTo("o", "op")
	require.Equal(t, int64(6), upTo)
	b.Publish(Message{Org: "o", Operation: op, Events: events(5, 6)}) // all out already: nothing is sent
	b.Close()
	var got [][]int64
	for m := range org.C {
		got = append(got, sequences(m))
	}
	require.Equal(t, [][]int64{{1, 2}, {3}, {6}, {4, 5}}, got)
}

// fakeTimeline is a database's operations and timelines as the tailer
// reads them, with a clock in milliseconds.
type fakeTimeline struct {
	mu     sync.Mutex
	now    int64
	ops    map[string]*capstan.OperationTouch
	touch  map[string]int64
	events map[string][]capstan.OperationEvent
	reads  int
	// newsReads counts TimelineNews queries.
	newsReads int
}

func (f *fakeTimeline) commit(org, id string, active bool, evs ...capstan.OperationEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now += 10
	o := f.ops[id]
	if o == nil {
		o = &capstan.OperationTouch{OrganizationID: org, ID: id, CreatedAt: time.Now()}
		f.ops[id] = o
	}
	o.Active = active
	f.events[id] = append(f.events[id], evs...)
	o.PrevSequence, o.LastSequence = o.LastSequence, evs[len(evs)-1].Sequence
	f.touch[id] = f.now
}

// command records a command for operation id (it touches it).
func (f *fakeTimeline) command(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now += 10
	f.ops[id].Commanded = f.now
	f.touch[id] = f.now
}

func (f *fakeTimeline) TouchedOperations(_ context.Context, since int64) ([]capstan.OperationTouch, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	var out []capstan.OperationTouch
	for id, o := range f.ops {
		if (since == 0 && o.Active) || (since > 0 && f.touch[id] >= since) {
			out = append(out, *o)
		}
	}
	return out, f.now, nil
}

func (f *fakeTimeline) TimelineNews(_ context.Context, cursors []capstan.TimelineCursor, limit int) ([]capstan.TimelineNews, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.newsReads++
	var out []capstan.TimelineNews
	for _, c := range cursors {
		o := f.ops[c.ID]
		status := capstan.OperationRunning
		if !o.Active {
			status = capstan.OperationSucceeded
		}
		n := capstan.TimelineNews{Operation: &capstan.Operation{Meta: capstan.Meta{ID: c.ID, OrganizationID: c.OrganizationID}, Status: status}, LastSequence: o.LastSequence}
		for _, e := range f.events[c.ID] {
			if e.Sequence > c.After && len(n.Events) < limit {
				n.Events = append(n.Events, e)
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// TestTailerBringsOtherProcessesCommits: the tailer starts from what is
// stored (no replay of the past), then publishes what other processes
// commit to operations someone here follows, tells Touched of every
// operation with news (and of nothing this process published itself),
// and reads one query per interval however many subscribers there are.
func TestTailerBringsOtherProcessesCommits(t *testing.T) {
	db := &fakeTimeline{now: 1_000_000, ops: map[string]*capstan.OperationTouch{}, touch: map[string]int64{}, events: map[string][]capstan.OperationEvent{}}
	db.commit("o", "old", true, events(1, 4)...)
	b := NewBroker(0)
	var touchedMu sync.Mutex
	touched := map[string]int{}
	tl := &Tailer{Timeline: db, Broker: b, Every: 5 * time.Millisecond, Slack: 50 * time.Millisecond,
		Touched: func(o capstan.OperationTouch) { touchedMu.Lock(); touched[o.ID]++; touchedMu.Unlock() }}
	subs := []*Subscription{b.Operation("o", "old"), b.Operation("o", "old"), b.Organization("o")}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); tl.Run(ctx) }()
	require.Eventually(t, func() bool { return tl.Reads.Load() >= 2 }, 5*time.Second, time.Millisecond)

	db.commit("o", "old", true, events(5, 6)...)   // another process moves it on
	db.commit("o", "new", true, events(1, 2)...)   // and starts one
	db.commit("p", "quiet", true, events(1, 1)...) // nobody here follows p
	require.Eventually(t, func() bool { upTo, _ := b.PublishedUpTo("o", "old"); return upTo == 6 }, 5*time.Second, time.Millisecond)
	// This process commits 7 itself (published at once), then the tailer
	// reads it too: it is not published twice, nor is it news.
	b.Publish(Message{Org: "o", Operation: capstan.Operation{Meta: capstan.Meta{ID: "old"}, Status: capstan.OperationRunning}, Events: events(7, 7)})
	db.commit("o", "old", true, events(7, 7)...)
	require.Eventually(t, func() bool { upTo, _ := b.PublishedUpTo("o", "new"); return upTo == 2 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { upTo, _ := b.PublishedUpTo("o", "old"); return upTo == 7 }, 5*time.Second, time.Millisecond)
	// Ten more reads see 7 again: none publishes it twice.
	readsBefore := tl.Reads.Load()
	require.Eventually(t, func() bool { return tl.Reads.Load() >= readsBefore+10 }, 5*time.Second, time.Millisecond)
	cancel()
	<-done
	b.Close()

	for _, s := range subs[:2] {
		var got []int64
		for m := range s.C {
			got = append(got, sequences(m)...)
		}
		require.Equal(t, []int64{5, 6, 7}, got, "not the past, then each event once")
	}
	var org []int64
	for m := range subs[2].C {
		org = append(org, sequences(m)...)
	}
	require.ElementsMatch(t, []int64{5, 6, 1, 2}, org, "the organization's list sees each operation's first sight here; 7 is node progress")
	touchedMu.Lock()
	defer touchedMu.Unlock()
	require.Equal(t, 1, touched["new"])
	require.Equal(t, 1, touched["quiet"], "the executor hears of it even if no subscriber does")
	require.GreaterOrEqual(t, touched["old"], 1)
	require.Equal(t, db.reads, int(tl.Reads.Load()), "one read of the store per interval, not one per subscriber")
}

// TestTailerTellsOfACommandOnce: a command recorded for an operation
// whose events are all published here is told to Touched (its owner
// applies it) once, not at every read that sees it within the slack —
// each telling makes the owner read the operation again; a later
// command is told again.
func TestTailerTellsOfACommandOnce(t *testing.T) {
	db := &fakeTimeline{now: 1_000_000, ops: map[string]*capstan.OperationTouch{}, touch: map[string]int64{}, events: map[string][]capstan.OperationEvent{}}
	db.commit("o", "held", true, events(1, 3)...)
	b := NewBroker(0)
	var told atomic.Int64
	tl := &Tailer{Timeline: db, Broker: b, Every: 5 * time.Millisecond, Idle: 5 * time.Millisecond, Slack: time.Minute,
		Touched: func(o capstan.OperationTouch) { told.Add(1) }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); tl.Run(ctx) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, func() bool { return tl.Reads.Load() >= 2 }, 5*time.Second, time.Millisecond)

	db.command("held")
	require.Eventually(t, func() bool { return told.Load() == 1 }, 5*time.Second, time.Millisecond)
	reads := tl.Reads.Load()
	require.Eventually(t, func() bool { return tl.Reads.Load() >= reads+20 }, 5*time.Second, time.Millisecond) // each sees it: within the minute
	require.Equal(t, int64(1), told.Load(), "told once")

	db.command("held")
	require.Eventually(t, func() bool { return told.Load() == 2 }, 5*time.Second, time.Millisecond, "a new command is told")
}

// TestTailerBringsAnOldOperationsNews: an operation the tailer does not
// know (finished before it started) that gets a commit (an assessment
// recorded on a finished operation) brings that commit's events, not its
// history; and a first local publish of an old operation does not make
// the tailer bring its history either.
func TestTailerBringsAnOldOperationsNews(t *testing.T) {
	db := &fakeTimeline{now: 1_000_000, ops: map[string]*capstan.OperationTouch{}, touch: map[string]int64{}, events: map[string][]capstan.OperationEvent{}}
	db.commit("o", "done", false, events(1, 9)...)
	db.commit("o", "mine", false, events(1, 4)...)
	db.now += 60_000 // they ended a minute before the tailer starts
	b := NewBroker(0)
	org := b.Organization("o")
	tl := &Tailer{Timeline: db, Broker: b, Every: 5 * time.Millisecond, Slack: 50 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); tl.Run(ctx) }()
	require.Eventually(t, func() bool { return tl.Reads.Load() >= 2 }, 5*time.Second, time.Millisecond)
	db.commit("o", "done", false, capstan.OperationEvent{Sequence: 10, Type: EventResourceAssessed})
	finished := capstan.Operation{Meta: capstan.Meta{ID: "mine"}, Status: capstan.OperationSucceeded}
	b.Publish(Message{Org: "o", Operation: finished, Events: []capstan.OperationEvent{{Sequence: 5, Type: EventResourceAssessed}}})
	db.commit("o", "mine", false, capstan.OperationEvent{Sequence: 5, Type: EventResourceAssessed})
	require.Eventually(t, func() bool { upTo, _ := b.PublishedUpTo("o", "done"); return upTo == 10 }, 5*time.Second, time.Millisecond)
	readsBefore := tl.Reads.Load() // five more reads bring nothing more
	require.Eventually(t, func() bool { return tl.Reads.Load() >= readsBefore+5 }, 5*time.Second, time.Millisecond)
	cancel()
	<-done
	b.Close()
	var got []string
	for m := range org.C {
		for _, e := range m.Events {
			got = append(got, fmt.Sprintf("%s/%d", m.Operation.ID, e.Sequence))
		}
	}
	require.ElementsMatch(t, []string{"mine/5", "done/10"}, got, "each news once, no history")
}

func TestTheTailerReadsLessOftenWhenNothingIsCommitted(t *testing.T) {
	const every, idle = 50 * time.Millisecond, 500 * time.Millisecond
	for _, c := range []struct {
		name string
		last time.Duration
		news bool
		want time.Duration
	}{
		{"news came: at once again", 400 * time.Millisecond, true, every},
		{"news keeps coming", every, true, every},
		{"the first quiet read doubles the wait", every, false, 100 * time.Millisecond},
		{"and the next", 200 * time.Millisecond, false, 400 * time.Millisecond},
		{"up to idle", 400 * time.Millisecond, false, idle},
		{"and no further", idle, false, idle},
		{"a first read", 0, false, every},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, nextWait(c.last, every, idle, c.news))
		})
	}
	require.Equal(t, every, nextWait(every, every, every/2, false), "idle is never shorter than every")
}

// TestOnlyOtherProcessesCommitsAreNews: the tailer reads at its fast
// interval only while others commit; this process's own commits (already
// published here) are not news, so a lone replica running operations
// reads at the idle interval.
func TestOnlyOtherProcessesCommitsAreNews(t *testing.T) {
	db := &fakeTimeline{now: 1_000_000, ops: map[string]*capstan.OperationTouch{}, touch: map[string]int64{}, events: map[string][]capstan.OperationEvent{}}
	db.commit("o", "mine", true, events(1, 2)...)
	b := NewBroker(0)
	defer b.Close()
	sub := b.Operation("o", "mine")
	defer sub.Close()
	tl := &Tailer{Timeline: db, Broker: b}
	ctx := context.Background()
	var since int64
	news, err := tl.read(ctx, &since, time.Second, 0)
	require.NoError(t, err)
	require.False(t, news, "the baseline is not news")

	mine := capstan.Operation{Meta: capstan.Meta{ID: "mine"}, Status: capstan.OperationRunning}
	b.Publish(Message{Org: "o", Operation: mine, Events: events(3, 4)}) // committed here
	db.commit("o", "mine", true, events(3, 4)...)
	news, err = tl.read(ctx, &since, time.Second, 0)
	require.NoError(t, err)
	require.False(t, news, "a commit made here is not news")

	db.commit("o", "mine", true, events(5, 5)...) // another process moves it on
	news, err = tl.read(ctx, &since, time.Second, 0)
	require.NoError(t, err)
	require.True(t, news)
	news, err = tl.read(ctx, &since, time.Second, 0)
	require.NoError(t, err)
	require.False(t, news, "news once: read again within the slack, it is published here already")

	db.commit("p", "theirs", true, events(1, 1)...) // nobody here follows it: still news (the executor hears of it)
	news, err = tl.read(ctx, &since, time.Second, 0)
	require.NoError(t, err)
	require.True(t, news)
}

// TestAFeedGetsEveryEventBeforeTheFinalSnapshot: one commit elsewhere
// of more events than one query takes (a group commit of a large
// operation) that ends the operation: the tailer reads on until its
// events reach the snapshot's last sequence, so a follower here gets
// them all with the final snapshot, not the first 500 and then the end.
func TestAFeedGetsEveryEventBeforeTheFinalSnapshot(t *testing.T) {
	db := &fakeTimeline{now: 1_000_000, ops: map[string]*capstan.OperationTouch{}, touch: map[string]int64{}, events: map[string][]capstan.OperationEvent{}}
	db.commit("o", "big", true, events(1, 1)...)
	b := NewBroker(0)
	sub := b.Operation("o", "big")
	tl := &Tailer{Timeline: db, Broker: b}
	ctx := context.Background()
	var since int64
	_, err := tl.read(ctx, &since, time.Second, 0) // the baseline
	require.NoError(t, err)

	db.commit("o", "big", false, events(2, 2*newsLimit+201)...) // ends it: the snapshot is final
	_, err = tl.read(ctx, &since, time.Second, 0)
	require.NoError(t, err)
	b.Close()
	var got []int64
	var final bool
	for m := range sub.C {
		require.False(t, final, "nothing after the final snapshot")
		got = append(got, sequences(m)...)
		final = m.Operation.Status.Terminal()
	}
	require.True(t, final)
	require.Len(t, got, 2*newsLimit+200, "every event, with the final snapshot")
	require.Equal(t, int64(2*newsLimit+201), got[len(got)-1])
	require.Equal(t, 3, db.newsReads, "read on in pages of newsLimit")
}

// hangingTimeline never answers its first read: a database that stopped
// answering on a connection.
type hangingTimeline struct {
	Timeline
	hung, hadDeadline atomic.Bool
}

func (h *hangingTimeline) TouchedOperations(ctx context.Context, since int64) ([]capstan.OperationTouch, int64, error) {
	if h.hung.CompareAndSwap(false, true) {
		_, ok := ctx.Deadline()
		h.hadDeadline.Store(ok)
		<-ctx.Done()
		return nil, 0, ctx.Err()
	}
	return h.Timeline.TouchedOperations(ctx, since)
}

// TestAReadThatGetsNoAnswerIsAbandoned: a read the database never answers
// ends at the tailer's read timeout, and the tailer reads again.
func TestAReadThatGetsNoAnswerIsAbandoned(t *testing.T) {
	db := &fakeTimeline{now: 1_000_000, ops: map[string]*capstan.OperationTouch{}, touch: map[string]int64{}, events: map[string][]capstan.OperationEvent{}}
	h := &hangingTimeline{Timeline: db}
	tl := &Tailer{Timeline: h, Broker: NewBroker(0), Every: 5 * time.Millisecond, Slack: 50 * time.Millisecond, ReadTimeout: 50 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); tl.Run(ctx) }()
	require.Eventually(t, func() bool { return tl.Reads.Load() >= 3 }, 5*time.Second, time.Millisecond, "the tailer reads again after a read that got no answer")
	cancel()
	<-done
	require.True(t, h.hung.Load())
	require.True(t, h.hadDeadline.Load(), "the read had a deadline")
}

// TestAFollowedOperationsMarkIsNeverForgotten: the marks of operations
// nothing moved for a while are dropped, except those someone here
// follows: an operation waiting on its sub-operation, or on a database
// coming back, goes on from where its followers are.
func TestAFollowedOperationsMarkIsNeverForgotten(t *testing.T) {
	b := NewBroker(0)
	defer b.Close()
	b.Known("o", "followed", 14)
	b.Known("o", "idle", 9)
	sub := b.Operation("o", "followed")
	defer sub.Close()
	b.mu.Lock()
	b.forget(time.Now().Add(time.Hour)) // every mark is idle by this cutoff
	b.mu.Unlock()
	upTo, known := b.PublishedUpTo("o", "followed")
	require.True(t, known)
	require.Equal(t, int64(14), upTo)
	_, known = b.PublishedUpTo("o", "idle")
	require.False(t, known, "a mark nobody follows is dropped")
}
