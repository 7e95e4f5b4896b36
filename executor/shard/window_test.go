package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWindow(t *testing.T) {
	clock := &stepClock{now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	w := NewWindow(clock, true)
	require.False(t, w.Open(), "closed until a renewal grants it")
	moved := w.Moved()
	w.Extend(clock.now.Add(10 * time.Second))
	require.True(t, w.Open())
	select {
	case <-moved:
	default:
		t.Fatal("an extension moves the window")
	}
	left, bounded := w.Remaining()
	require.True(t, bounded)
	require.Equal(t, 10*time.Second, left)
	moved = w.Moved()
	w.Extend(clock.now.Add(5 * time.Second)) // a late renewal's: never back
	left, _ = w.Remaining()
	require.Equal(t, 10*time.Second, left)
	select {
	case <-moved:
		t.Fatal("a shorter end does not move it")
	default:
	}
	clock.now = clock.now.Add(10 * time.Second)
	require.False(t, w.Open(), "closed at its end")

	open := NewWindow(clock, false) // no lease: open for good
	require.True(t, open.Open())
	_, bounded = open.Remaining()
	require.False(t, bounded)
	require.Nil(t, open.Moved())
	var none *Window
	require.True(t, none.Open())
}

// stepClock is a clock tests move by hand.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time { return c.now }
