package executor

import (
	"sync/atomic"

	"github.com/capstan-dev/capstan"
)

// Wakes. A loop caches its operation's state and reads it again only
// when woken by an outside change. The timeline tailer tells of every
// commit it sees that this process has not published yet — and a
// replica's own step, committed but not yet published when the tailer
// reads, looks just like that (measured: about eight spurious wakes an
// operation in 100 × 100 on three replicas, each a read of the
// operation's records). So a wake says why it came, and a loop reads
// again only when something it has not seen may have changed: a wake
// of any other kind, a command it was not told of yet, or a commit
// beyond the last one its state includes.

// wakeNote is what the loop was woken for since it last looked.
type wakeNote struct {
	// outside is set by every wake but the tailer's (a decision made
	// here, a child's end, the periodic sweep): read again.
	outside atomic.Bool
	// upTo is the latest sequence a touch told of.
	upTo atomic.Int64
	// commanded is the latest command time a touch told of; command
	// is set when it moved.
	commanded atomic.Int64
	command   atomic.Bool
}

// wakeFor sends l the wake note says (without blocking: a wake is
// pending already when the channel is full).
func (l *loop) wakeFor(note func(*wakeNote)) {
	note(&l.note)
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// outsideChange notes a wake that always makes the loop read again.
func outsideChange(n *wakeNote) { n.outside.Store(true) }

// touch notes what the tailer told of t.
func touch(t capstan.OperationTouch) func(*wakeNote) {
	return func(n *wakeNote) {
		for {
			last := n.upTo.Load()
			if t.LastSequence <= last || n.upTo.CompareAndSwap(last, t.LastSequence) {
				break
			}
		}
		for {
			last := n.commanded.Load()
			if t.Commanded <= last {
				break
			}
			if n.commanded.CompareAndSwap(last, t.Commanded) {
				n.command.Store(true)
				break
			}
		}
	}
}

// woken reports whether what woke the loop may have changed its
// operation: then it reads again.
func (l *loop) woken() bool {
	outside := l.note.outside.Swap(false)
	command := l.note.command.Swap(false)
	return outside || command || l.note.upTo.Load() > l.readUpTo
}

// sawUpTo notes that the loop's state includes the commits up to seq.
func (l *loop) sawUpTo(seq int64) { l.readUpTo = max(l.readUpTo, seq) }
