package live

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/capstan-dev/capstan"
)

// Timeline is the store as the tailer reads it (cypher.Store).
type Timeline interface {
	// TouchedOperations returns the operations a commit touched at or
	// after since (the database's clock, in milliseconds), or every
	// unfinished one with since 0, and the database's clock.
	TouchedOperations(ctx context.Context, since int64) ([]capstan.OperationTouch, int64, error)
	// TimelineNews reads each cursor's operation and its events after it.
	TimelineNews(ctx context.Context, cursors []capstan.TimelineCursor, limit int) ([]capstan.TimelineNews, error)
}

// Tailer brings the commits of other processes on the same database to
// this one (docs/LIVE.md): once per interval it asks which operations a
// commit touched lately — one query for the whole process, however many
// subscribers — and for those with news it did not publish itself, it
// tells Touched (the executor wakes the operation's loop, or its parent's)
// and, when someone here follows the operation or its organization, reads
// their new events (one more query for all of them) and publishes them to
// the broker. The broker drops what it published already, so an event
// reaches each subscriber once, whichever process committed it.
type Tailer struct {
	Timeline Timeline
	Broker   *Broker
	// Touched is told of every commit made elsewhere.
	Touched func(capstan.OperationTouch)
	// Every is the interval between reads while other processes commit
	// (DefaultTailEvery); Idle the longest, once a read brought no news
	// (DefaultTailIdle): the interval doubles from Every to Idle.
	Every, Idle time.Duration
	// Slack is how far before its last read each read looks again: a
	// commit becomes visible some time after its timestamp (the
	// statement's start) (DefaultTailSlack).
	Slack time.Duration
	// Lookback is how far back one read in each Slack looks: further
	// than the longest a commit can take to become visible (the store
	// bounds it: capstan.MaxOperationCommit), so that no commit is ever
	// missed, however late it became visible (DefaultTailLookback).
	Lookback time.Duration
	// ReadTimeout bounds one read (DefaultTailReadTimeout).
	ReadTimeout time.Duration
	Log         *slog.Logger
	// Reads counts the reads; Delivered the events it published.
	Reads, Delivered atomic.Int64
	// commanded is, per operation, the command time Touched was last
	// told of: a read sees a command again for as long as it is within
	// the slack (every read, for seconds), and each telling makes the
	// owner read the operation again. Run's goroutine owns it.
	commanded map[string]int64
}

// DefaultTailEvery, DefaultTailIdle and DefaultTailSlack are the
// tailer's interval while other processes commit, its longest when none
// does, and how far back each read looks again. A replica that hears
// nothing from the others reads twice a second, not twenty times, however
// busy it is itself: each read costs the database a query, and the first
// commit after a quiet spell reaches it within half a second.
const (
	DefaultTailEvery    = 50 * time.Millisecond
	DefaultTailIdle     = 500 * time.Millisecond
	DefaultTailSlack    = 5 * time.Second
	DefaultTailLookback = capstan.MaxOperationCommit + DefaultTailSlack
)

// nextWait is the wait before the tailer's next read, after one that
// waited last: every when the read found news (commits made elsewhere),
// else twice last, up to idle: a database that does not answer is asked
// less often too.
func nextWait(last, every, idle time.Duration, news bool) time.Duration {
	if news || last < every {
		return every
	}
	return min(2*last, max(idle, every))
}

// DefaultTailReadTimeout bounds one read: a database that stops
// answering on a connection (restarting, say) must not stop the tailer,
// and with it every other process's commits reaching this one's
// subscribers.
const DefaultTailReadTimeout = 10 * time.Second

// newsLimit bounds the events one query takes of one operation; readOn
// reads on, up to maxNewsReads queries for one operation in one read.
const (
	newsLimit    = 500
	maxNewsReads = 100
)

// readOn completes n: while its events stop short of the operation's last
// sequence as of its snapshot (a commit of more than newsLimit events, or
// one made between the query's two reads), it reads on from its last
// event, taking the newer snapshot each time. A message whose snapshot is
// ahead of its events would end a feed early: a final snapshot with the
// operation's last events missing. An operation still ahead after
// maxNewsReads queries (committing faster than it can be read) fails the
// read: nothing of it is published, and the next read goes on from what
// was.
func (t *Tailer) readOn(ctx context.Context, n capstan.TimelineNews) (capstan.TimelineNews, error) {
	for range maxNewsReads {
		if len(n.Events) == 0 || n.Operation == nil || n.Events[len(n.Events)-1].Sequence >= n.LastSequence {
			return n, nil
		}
		cursor := capstan.TimelineCursor{OrganizationID: n.Operation.OrganizationID, ID: n.Operation.ID, After: n.Events[len(n.Events)-1].Sequence}
		more, err := t.Timeline.TimelineNews(ctx, []capstan.TimelineCursor{cursor}, newsLimit)
		if err != nil {
			return n, err
		}
		if len(more) == 0 || len(more[0].Events) == 0 {
			return n, nil // nothing more to read: the snapshot is what there is
		}
		n.Operation, n.LastSequence = more[0].Operation, more[0].LastSequence
		n.Events = append(n.Events, more[0].Events...)
	}
	return n, capstan.Errorf(capstan.EUNAVAILABLE, "operation %s commits faster than the tailer reads it: %d events read, %d stored", n.Operation.ID, len(n.Events), n.LastSequence)
}

// Run tails until ctx ends. It starts from every unfinished operation as
// stored now: what happened before is the store's to replay. An
// operation it does not know (finished before it started, or forgotten
// since: Broker.Forget) brings the events of its latest commit.
func (t *Tailer) Run(ctx context.Context) {
	every, idle, slack := t.Every, t.Idle, t.Slack
	if every <= 0 {
		every = DefaultTailEvery
	}
	if idle <= 0 {
		idle = DefaultTailIdle
	}
	if slack <= 0 {
		slack = DefaultTailSlack
	}
	readTimeout := t.ReadTimeout
	if readTimeout <= 0 {
		readTimeout = DefaultTailReadTimeout
	}
	lookback := t.Lookback
	if lookback <= 0 {
		lookback = DefaultTailLookback
	}
	lookback = min(max(lookback, slack), DefaultTailLookback) // the broker forgets marks after twice the default
	var swept time.Time                                       // when a read last looked back the whole lookback
	log := t.Log
	if log == nil {
		log = slog.Default()
	}
	var since int64
	failing := false
	wait := every
	for {
		readCtx, cancel := context.WithTimeout(ctx, readTimeout)
		back := slack
		if time.Since(swept) >= slack {
			back = lookback
		}
		news, err := t.read(readCtx, &since, slack, back-slack)
		cancel()
		if err == nil && back > slack {
			swept = time.Now()
		}
		wait = nextWait(wait, every, idle, news)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !failing:
			log.Warn("tailing the timeline failed; trying again", "err", err.Error())
			failing = true
		case err == nil && failing:
			log.Info("tailing the timeline again")
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// read is one read. since is the database's clock of the next read's
// start, less the slack (0 before the first: the baseline of unfinished
// operations); further, when further is not zero, the read looks that
// much further back (the lookback's sweep). It reports whether the read
// found news: commits made elsewhere that this process had not
// published. Its own commits are not news: a lone replica running
// operations reads at the idle interval.
func (t *Tailer) read(ctx context.Context, since *int64, slack, further time.Duration) (news bool, err error) {
	if t.Reads.Add(1)%100 == 0 {
		t.Broker.Forget()
	}
	from := *since
	if from > 0 {
		from = max(1, from-further.Milliseconds())
	}
	touches, now, err := t.Timeline.TouchedOperations(ctx, from)
	if err != nil {
		return false, err
	}
	if *since == 0 {
		for _, o := range touches {
			t.Broker.Known(o.OrganizationID, o.ID, o.LastSequence)
		}
		*since = now - slack.Milliseconds()
		return false, nil
	}
	next := now - slack.Milliseconds() // only once this read has succeeded
	var cursors []capstan.TimelineCursor
	for _, o := range touches {
		upTo, known := t.Broker.PublishedUpTo(o.OrganizationID, o.ID)
		if !known {
			// Not followed here since the baseline (or forgotten since):
			// its news is its latest commit's events — an assessment on
			// a finished operation, say.
			upTo = min(o.PrevSequence, o.LastSequence)
			t.Broker.Known(o.OrganizationID, o.ID, upTo)
		}
		if o.LastSequence <= upTo {
			if o.Commanded >= *since && t.Touched != nil && t.firstSight(o) {
				t.Touched(o) // a command was recorded: its owner applies it
			}
			continue // published here already (most often: committed here)
		}
		news = true
		if t.Touched != nil {
			t.Touched(o)
		}
		if t.Broker.Interested(o.OrganizationID, o.ID) {
			cursors = append(cursors, capstan.TimelineCursor{OrganizationID: o.OrganizationID, ID: o.ID, After: upTo})
		} else {
			t.Broker.Known(o.OrganizationID, o.ID, o.LastSequence)
		}
	}
	t.forgetCommands(next)
	if len(cursors) == 0 {
		*since = next
		return news, nil
	}
	timelines, err := t.Timeline.TimelineNews(ctx, cursors, newsLimit)
	if err != nil {
		return news, err
	}
	for _, n := range timelines {
		if n, err = t.readOn(ctx, n); err != nil {
			return news, err // the next read looks from the same since again
		}
		if len(n.Events) == 0 {
			continue
		}
		t.Delivered.Add(int64(len(n.Events)))
		t.Broker.Publish(Message{Org: n.Operation.OrganizationID, Operation: *n.Operation, Events: n.Events})
	}
	*since = next
	return news, nil
}

// firstSight reports whether o's latest command is one Touched has not
// been told of, and notes it.
func (t *Tailer) firstSight(o capstan.OperationTouch) bool {
	key := operationKey(o.OrganizationID, o.ID)
	if t.commanded[key] >= o.Commanded {
		return false
	}
	if t.commanded == nil {
		t.commanded = map[string]int64{}
	}
	t.commanded[key] = o.Commanded
	return true
}

// forgetCommands drops the command times before since: no read from
// there on tells of them (it tells only of commands at or after its since).
func (t *Tailer) forgetCommands(since int64) {
	for key, at := range t.commanded {
		if at < since {
			delete(t.commanded, key)
		}
	}
}
