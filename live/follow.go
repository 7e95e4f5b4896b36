package live

import (
	"context"
	"fmt"

	"github.com/capstan-dev/capstan"
)

// pageSize is how many stored events one replay read returns.
const pageSize = 500

// Source is an operation's stored timeline and status.
type Source interface {
	// Events returns up to limit events with a sequence above after, in order.
	Events(ctx context.Context, after int64, limit int) ([]capstan.OperationEvent, error)
	// Terminal reports whether the operation has ended.
	Terminal(ctx context.Context) (bool, error)
}

// OverflowError ends a subscription that fell too far behind; Cursor is
// the last event it received, the cursor to resume from.
type OverflowError struct{ Cursor int64 }

func (e *OverflowError) Error() string {
	return fmt.Sprintf("the subscriber fell too far behind; resume from cursor %d", e.Cursor)
}

// Follow sends the operation's events after cursor after, each once and in
// order: first the stored ones, then live ones from sub (which must have
// been subscribed before Follow is called, so nothing falls between the
// two). A live event ahead of the last one sent means some were not
// delivered live; they are read from the store first. Follow returns nil
// once the operation's final change is sent or the broker shut down, an
// *OverflowError when sub overflowed, or the error of send or ctx.
func Follow(ctx context.Context, src Source, sub *Subscription, after int64, send func(capstan.OperationEvent) error) error {
	last := after
	catchUp := func() error {
		for {
			events, err := src.Events(ctx, last, pageSize)
			if err != nil {
				return err
			}
			for _, e := range events {
				if err := send(e); err != nil {
					return err
				}
				last = e.Sequence
			}
			if len(events) < pageSize {
				return nil
			}
		}
	}
	ended, err := src.Terminal(ctx) // before the replay: an ended operation's events are all stored
	if err != nil {
		return err
	}
	if err := catchUp(); err != nil || ended {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m, ok := <-sub.C:
			if !ok {
				if sub.Overflowed() {
					return &OverflowError{Cursor: last}
				}
				return nil
			}
			for _, e := range m.Events {
				switch {
				case e.Sequence <= last: // already sent (replayed)
				case e.Sequence == last+1:
					if err := send(e); err != nil {
						return err
					}
					last = e.Sequence
				default:
					if err := catchUp(); err != nil {
						return err
					}
				}
			}
			if m.Operation.Status.Terminal() {
				return catchUp()
			}
		}
	}
}
