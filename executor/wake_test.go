package executor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// TestAWakeReadsAgainOnlyForWhatTheLoopHasNotSeen: the tailer's touch of
// the loop's own commits (at or below what its state includes) is no
// reason to read again; a commit beyond it, a new command or any other
// wake is, and each is taken once.
func TestAWakeReadsAgainOnlyForWhatTheLoopHasNotSeen(t *testing.T) {
	for _, c := range []struct {
		name   string
		seen   int64
		wakes  []func(*wakeNote)
		woken  bool
		second bool // a wake with nothing new after it
	}{
		{name: "its own commit told back", seen: 7, wakes: []func(*wakeNote){touch(capstan.OperationTouch{LastSequence: 7})}},
		{name: "an older commit told late", seen: 7, wakes: []func(*wakeNote){touch(capstan.OperationTouch{LastSequence: 5})}},
		{name: "a commit beyond its own", seen: 7, wakes: []func(*wakeNote){touch(capstan.OperationTouch{LastSequence: 8})}, woken: true, second: true},
		{name: "a new command", seen: 7, wakes: []func(*wakeNote){touch(capstan.OperationTouch{LastSequence: 7, Commanded: 1000})}, woken: true},
		{name: "the same command told twice", seen: 7, wakes: []func(*wakeNote){
			touch(capstan.OperationTouch{LastSequence: 7, Commanded: 1000}), touch(capstan.OperationTouch{LastSequence: 7, Commanded: 1000})}, woken: true},
		{name: "an outside change", seen: 7, wakes: []func(*wakeNote){outsideChange}, woken: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &loop{wake: make(chan struct{}, 1)}
			l.sawUpTo(c.seen)
			for _, w := range c.wakes {
				l.wakeFor(w)
			}
			require.Len(t, l.wake, 1, "a wake is sent either way")
			require.Equal(t, c.woken, l.woken())
			require.Equal(t, c.second, l.woken(), "what was taken is not taken again (a commit beyond stays until read)")
		})
	}
	l := &loop{wake: make(chan struct{}, 1)}
	l.wakeFor(touch(capstan.OperationTouch{LastSequence: 9}))
	l.sawUpTo(9) // the read that followed
	require.False(t, l.woken(), "read: nothing left")
}
