package capstan

import (
	"errors"
	"fmt"
	"time"
)

// A Fence is the grant of a lease a writer holds — the lease of the
// shard of operations the write belongs to (its Key), the holder, and the
// lease's fencing token, which grows by one with every grant to another
// holder (or after a release). A store that keeps leases checks the fence
// an operation's change carries (OperationChange.Fence) inside the same
// transaction as its write, so a holder that stalled past its lease
// (paused, partitioned) cannot commit once another took over. It travels
// in the change, never in a context: a context dropped on the way would
// drop the check without a word.
type Fence struct {
	Key    string
	Holder string
	Token  int64
}

// ErrFenced is the cause of a write refused because its fence is no
// longer the lease's: another executor holds it now.
var ErrFenced = errors.New("fenced")

// Fenced is the error of a write under fence f refused by the lease now
// held by current (token, holder).
func Fenced(f Fence, current Fence) error {
	return &Error{Code: ECONFLICT, Err: ErrFenced, Message: fmt.Sprintf(
		"the lease %s was granted to %s (token %d) after %s's grant (token %d): this write is refused, and its executor stops running the operation", f.Key, orNobody(current.Holder), current.Token, f.Holder, f.Token)}
}

// FenceRanOut is the error of a write under fence f refused because its
// lease ran out (at until, in the database's clock) before it was renewed:
// another executor may hold it now.
func FenceRanOut(f Fence, until time.Time) error {
	return &Error{Code: ECONFLICT, Err: ErrFenced, Message: fmt.Sprintf(
		"the lease %s of %s (token %d) ran out at %s before it was renewed: this write is refused, and its executor stops running the operation", f.Key, f.Holder, f.Token, until.UTC().Format(time.RFC3339Nano))}
}

func orNobody(holder string) string {
	if holder == "" {
		return "nobody (released)"
	}
	return holder
}

// IsFenced reports whether err is a write refused by its fence.
func IsFenced(err error) bool { return errors.Is(err, ErrFenced) }
