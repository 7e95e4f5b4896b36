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
