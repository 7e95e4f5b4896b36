package server

import (
	"sync"
	"time"
)

// keepaliveSlots is how many groups the connections are pinged in, one
// group per tick: with the default interval, a group every second.
const keepaliveSlots = 20

// keepalive pings every registered connection once per interval, from one
// goroutine. Connections are spread over slots and one slot is pinged per
// tick (interval/slots apart): pinging 10,000 connections at once is
// 10,000 writes in one burst, which delays every event queued behind it.
type keepalive struct {
	every time.Duration
	done  <-chan struct{}
	ping  func(*wsConn)
	once  sync.Once
	mu    sync.Mutex
	slots [keepaliveSlots]map[*wsConn]struct{}
	slot  map[*wsConn]int
	next  int // the slot the next connection joins
}

func newKeepalive(every time.Duration, done <-chan struct{}, ping func(*wsConn)) *keepalive {
	k := &keepalive{every: every, done: done, ping: ping, slot: map[*wsConn]int{}}
	for i := range k.slots {
		k.slots[i] = map[*wsConn]struct{}{}
	}
	return k
}

func (k *keepalive) add(c *wsConn) {
	k.once.Do(func() { go k.run() })
	k.mu.Lock()
	defer k.mu.Unlock()
	i := k.next
	k.next = (k.next + 1) % keepaliveSlots
	k.slots[i][c] = struct{}{}
	k.slot[c] = i
}

func (k *keepalive) remove(c *wsConn) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if i, ok := k.slot[c]; ok {
		delete(k.slots[i], c)
		delete(k.slot, c)
	}
}

func (k *keepalive) run() {
	t := time.NewTicker(k.every / keepaliveSlots)
	defer t.Stop()
	for tick := 0; ; tick = (tick + 1) % keepaliveSlots {
		select {
		case <-k.done:
			return
		case <-t.C:
		}
		k.pingSlot(tick)
	}
}

// pingSlot pings the connections of one slot: one tick's work.
func (k *keepalive) pingSlot(tick int) {
	k.mu.Lock()
	conns := make([]*wsConn, 0, len(k.slots[tick]))
	for c := range k.slots[tick] {
		conns = append(conns, c)
	}
	k.mu.Unlock()
	for _, c := range conns {
		k.ping(c)
	}
}
