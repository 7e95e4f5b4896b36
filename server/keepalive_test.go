package server

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestKeepalivePingsEveryConnectionOncePerIntervalInSlots(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	var mu sync.Mutex
	pinged := map[*wsConn]int{}
	var ticks [][]*wsConn // who each ping burst reached, in order
	var last time.Time
	k := newKeepalive(400*time.Millisecond, done, func(c *wsConn) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(last) > 5*time.Millisecond {
			ticks = append(ticks, nil)
			last = now
		}
		pinged[c]++
		ticks[len(ticks)-1] = append(ticks[len(ticks)-1], c)
	})
	conns := make([]*wsConn, 3*keepaliveSlots)
	for i := range conns {
		conns[i] = &wsConn{}
		k.add(conns[i])
	}
	gone := conns[0]
	k.remove(gone)

	time.Sleep(500 * time.Millisecond) // one interval and a bit
	mu.Lock()
	defer mu.Unlock()
	_, found := pinged[gone]
	require.False(t, found, "a removed connection is not pinged")
	for _, c := range conns[1:] {
		require.GreaterOrEqual(t, pinged[c], 1, "every connection within an interval")
		require.LessOrEqual(t, pinged[c], 2)
	}
	for _, burst := range ticks {
		require.LessOrEqual(t, len(burst), 3, "a tick pings one slot, not everyone")
	}
}
