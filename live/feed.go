package live

import (
	"context"
	"sync"
	"time"

	"github.com/capstan-dev/capstan"

	"github.com/capstan-dev/capstan/internal/guard"
)

// Out is where a Feed delivers events: a subscriber's stream.
type Out interface {
	// TrySend delivers without waiting; false means the subscriber's
	// buffer is full.
	TrySend(e *Shared) bool
	// Send delivers, waiting while the subscriber catches up.
	Send(ctx context.Context, e *Shared) error
	// End ends the stream; err is nil for a normal end.
	End(err error)
}

// Feed delivers one operation's timeline after a cursor to one subscriber,
// each event once and in order: first the stored events, then live ones.
// While the subscriber is caught up it has no goroutine of its own: the
// broker's publish hands each event straight to Out (never waiting; a full
// buffer ends the stream with an *OverflowError). A goroutine runs only to
// replay from the store: at the start, and when a live event arrives ahead
// of the last one delivered (a gap, filled from the store).
type Feed struct {
	ctx context.Context
	b   *Broker
	key string // the operation's, in the broker
	src Source
	out Out
	sub *Subscription

	mu       sync.Mutex
	last     int64
	replay   bool       // a goroutine is replaying and owns out
	pending  []*Message // live messages that arrived meanwhile
	resync   bool       // too many arrived meanwhile: read the store again instead
	ended    bool
	shutdown bool // the broker closed, or the subscriber left, while replaying
	final    bool // the operation's final change was seen
}

// maxPending bounds what may wait for a replay to finish.
const maxPending = DefaultBuffer

// StartFeed subscribes before it reads the store, so nothing falls between
// the replay and the live stream, and starts the replay.
func StartFeed(ctx context.Context, b *Broker, org, opID string, src Source, after int64, out Out) *Feed {
	f := &Feed{ctx: ctx, b: b, key: operationKey(org, opID), src: src, out: out, last: after, replay: true}
	f.sub = b.operationFunc(f.key, f.receive)
	AfterStop(ctx, f.stop)
	go f.run()
	return f
}

// run replays from the store until it has caught up with the live
// messages that arrived meanwhile, then hands delivery to receive.
func (f *Feed) run() {
	f.b.Replays.Add(1)
	defer f.b.Replays.Add(-1)
	// The sections under f.mu only move fields, so a panic never leaves
	// it held and f.end can take it.
	defer guard.Recover(nil, "operation feed", f.end)
	var ended bool
	err := RetryUnavailable(f.ctx, func(ctx context.Context) (err error) {
		ended, err = f.src.Terminal(ctx)
		return err
	})
	if err == nil {
		err = f.catchUp()
	}
	for err == nil {
		f.mu.Lock()
		batch, resync := f.pending, f.resync
		f.pending, f.resync = nil, false
		if resync {
			f.mu.Unlock()
			err = f.catchUp()
			continue
		}
		if len(batch) == 0 {
			done := ended || f.final || f.shutdown
			if !done {
				f.replay = false // caught up: live from here
			}
			f.mu.Unlock()
			if done {
				f.end(nil)
			}
			return
		}
		f.mu.Unlock()
		for _, m := range batch {
			if err = f.deliver(m); err != nil {
				break
			}
		}
	}
	f.end(err)
}

// deliver sends one message's events while replaying (may wait).
func (f *Feed) deliver(m *Message) error {
	for i, e := range m.Events {
		switch {
		case e.Sequence <= f.last:
		case e.Sequence == f.last+1:
			if err := f.out.Send(f.ctx, m.shared(i)); err != nil {
				return err
			}
			f.last = e.Sequence
		default:
			return f.catchUp()
		}
	}
	return nil
}

// storeRetries is how often a feed reads the store again after an
// UNAVAILABLE answer (a database busy or restarting for a moment),
// waiting twice as long each time from 100 ms, before it ends the
// subscription with the error (the client resumes from its cursor).
const storeRetries = 5

// storeReadTimeout bounds one read of the store: a read that gets no
// answer is UNAVAILABLE and tried again, never a feed stuck for good.
const storeReadTimeout = 10 * time.Second

// RetryUnavailable runs read until it succeeds, fails otherwise than
// UNAVAILABLE, or has been retried storeRetries times; each try has
// storeReadTimeout.
func RetryUnavailable(ctx context.Context, read func(ctx context.Context) error) error {
	wait := 100 * time.Millisecond
	for i := 0; ; i++ {
		tryCtx, cancel := context.WithTimeout(ctx, storeReadTimeout)
		err := read(tryCtx)
		cancel()
		if err == nil || i == storeRetries || capstan.ErrorCode(err) != capstan.EUNAVAILABLE {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// catchUp sends every stored event after the last one delivered: those
// the broker still holds (recent.go) without reading them, then what the
// store has after them.
func (f *Feed) catchUp() error {
	for {
		for _, e := range f.b.recentAfter(f.key, f.last) {
			if err := f.out.Send(f.ctx, e); err != nil {
				return err
			}
			f.last = e.Event.Sequence
		}
		var events []capstan.OperationEvent
		err := RetryUnavailable(f.ctx, func(ctx context.Context) (err error) {
			events, err = f.src.Events(ctx, f.last, pageSize)
			return err
		})
		if err != nil {
			return err
		}
		for _, e := range events {
			if err := f.out.Send(f.ctx, Stored(e, &f.b.Encodings)); err != nil {
				return err
			}
			f.last = e.Sequence
		}
		if len(events) < pageSize {
			return nil
		}
	}
}

// receive runs inside the broker's publish: it must not wait. A nil
// message means the broker shut down. It reports whether the feed still
// wants messages.
func (f *Feed) receive(m *Message) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.ended:
	case m == nil && f.replay:
		f.shutdown = true
	case m == nil:
		f.endLocked(nil)
	case f.replay:
		f.final = f.final || m.Operation.Status.Terminal()
		if len(f.pending) >= maxPending { // the store has them all: read it again
			f.pending, f.resync = nil, true
			return true
		}
		f.pending = append(f.pending, m)
	default:
		f.live(m)
	}
	return !f.ended
}

// live delivers a message while caught up (f.mu held).
func (f *Feed) live(m *Message) {
	for i, e := range m.Events {
		switch {
		case e.Sequence <= f.last:
		case e.Sequence == f.last+1:
			if !f.out.TrySend(m.shared(i)) {
				f.endLocked(&OverflowError{Cursor: f.last})
				return
			}
			f.last = e.Sequence
		default: // a gap: replay from the store, then the rest of this message
			f.replay = true
			rest := &Message{Org: m.Org, Operation: m.Operation, Events: m.Events[i:]}
			if m.events != nil {
				rest.events = m.events[i:]
			}
			f.pending = []*Message{rest}
			f.final = m.Operation.Status.Terminal()
			go f.run()
			return
		}
	}
	if m.Operation.Status.Terminal() {
		f.endLocked(nil)
	}
}

// stop ends a feed whose subscriber left.
func (f *Feed) stop() {
	// A feed that has ended is already out of the broker, or about to be
	// by whoever ended it (the publish that delivered its last message,
	// the replay's end, the broker's shutdown). Skipping Close then keeps
	// the subscribers of an operation's final change from queueing on the
	// broker's lock, all at once, while it is still delivering that change.
	f.mu.Lock()
	ended := f.ended
	f.mu.Unlock()
	if ended {
		return
	}
	f.sub.Close() // not under f.mu: the broker calls receive under its own lock
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.replay { // the replaying goroutine ends it when it stops
		f.shutdown = true
		return
	}
	f.endLocked(nil)
}

// end ends the feed from its replaying goroutine.
func (f *Feed) end(err error) {
	func() {
		f.mu.Lock()
		defer f.mu.Unlock() // also when End panics: the broker's receive takes f.mu
		f.endLocked(err)
	}()
	f.sub.Close() // not under f.mu: the broker calls receive under its own lock
}

// endLocked ends the stream once (f.mu held); the broker drops the
// subscription when receive reports it ended.
func (f *Feed) endLocked(err error) {
	if f.ended {
		return
	}
	f.ended = true
	f.out.End(err)
}
