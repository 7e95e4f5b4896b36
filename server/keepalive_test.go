package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKeepalivePingsEveryConnectionOncePerIntervalInSlots: the
// connections are spread over the slots, one slot is pinged per tick, so
// an interval (keepaliveSlots ticks) pings every connection once and no
// tick pings more than its share. The ticks are driven here, one by one,
// rather than waited for: the ticker only spaces them.
func TestKeepalivePingsEveryConnectionOncePerIntervalInSlots(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	pinged := map[*wsConn]int{}
	k := newKeepalive(400*time.Millisecond, done, func(c *wsConn) { pinged[c]++ })
	k.once.Do(func() {}) // no ticker: the test ticks
	conns := make([]*wsConn, 3*keepaliveSlots)
	for i := range conns {
		conns[i] = &wsConn{}
		k.add(conns[i])
	}
	gone := conns[0]
	k.remove(gone)

	for tick := range keepaliveSlots {
		before := len(pinged)
		k.pingSlot(tick)
		require.LessOrEqual(t, len(pinged)-before, 3, "a tick pings one slot, not everyone")
	}
	_, found := pinged[gone]
	require.False(t, found, "a removed connection is not pinged")
	for _, c := range conns[1:] {
		require.Equal(t, 1, pinged[c], "every connection once an interval")
	}
}
