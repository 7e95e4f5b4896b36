package server

import (
	"bytes"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	gorilla "github.com/gorilla/websocket"

	"github.com/capstan-dev/capstan/internal/guard"
)

// A connection's writing side: everything it sends goes through one
// queue, written by a writer goroutine that exists only while the queue is
// not empty, in batches of one write system call; subscription results are
// read (and encoded, or taken from another subscriber's encoding) as they
// are written.

func (c *wsConn) enqueue(msg []byte) { c.push(outbound{msg: msg}) }

// ping asks the writer for a keep-alive: a ping control frame for
// liveness and the protocol's own ping (or ka), in one write.
func (c *wsConn) ping() { c.push(outbound{ping: true}) }

// Keep-alive messages of the two protocols.
var (
	pingMessage = encode("ping", "", nil)
	kaMessage   = encode("ka", "", nil)
)

func (c *wsConn) push(o outbound) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pushLocked(o)
}

// pushLocked queues o and starts the writer if it is not running.
func (c *wsConn) pushLocked(o outbound) {
	if c.closed {
		return
	}
	c.queue = append(c.queue, o)
	if !c.writing {
		c.writing = true
		go c.write()
	}
}

// write sends the queue in order until it is empty, then exits. A
// delivery should cost no allocation of its own: the writer swaps two
// queue slices (the connection keeps one while idle, bounded by
// maxKeptQueue) and encodes results into a pooled scratch buffer, which
// the frame is copied out of before the next result is read. Garbage per
// delivery is what paced the collector under 10,000 subscribers.
func (c *wsConn) write() {
	defer guard.Recover(c.t.log, "websocket writer", c.internalError)
	scratch := scratchBuffers.Get().(*[]byte)
	defer putScratch(scratch)
	var spare []outbound
	for {
		c.mu.Lock()
		batch := c.queue
		if len(batch) == 0 || c.closed {
			c.writing = false
			c.mu.Unlock()
			return
		}
		c.queue = spare
		c.mu.Unlock()
		if !c.writeBatch(batch, scratch) {
			return
		}
		clear(batch) // holds no message or subscription for the collector
		spare = nil
		if cap(batch) <= maxKeptQueue {
			spare = batch[:0]
		}
	}
}

// maxKeptQueue bounds the queue capacity a connection keeps between
// bursts; maxScratch, the scratch buffer returned to the pool.
const (
	maxKeptQueue = 64
	maxScratch   = 64 << 10
)

var scratchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func putScratch(b *[]byte) {
	if cap(*b) <= maxScratch {
		*b = (*b)[:0]
		scratchBuffers.Put(b)
	}
}

// writeBatch writes queued messages as one batch of frames (one write
// system call); false means the connection ended.
func (c *wsConn) writeBatch(batch []outbound, scratch *[]byte) bool {
	c.wire.begin()
	failed := false
	for _, o := range batch {
		if o.close {
			_ = c.wire.flush()
			c.closeNow(c.closeCode())
			return false
		}
		msg := o.msg
		switch {
		case o.sub != nil:
			msg = c.result(o.sub, scratch)
		case o.ping:
			msg = pingMessage
			if c.legacy {
				msg = kaMessage
			}
			failed = c.ws.WriteControl(gorilla.PingMessage, nil, time.Now().Add(writeTimeout)) != nil
		}
		if failed || msg != nil && c.writeNow(msg) != nil {
			failed = true
			break
		}
	}
	if c.wire.flush() == nil && !failed {
		return true
	}
	c.mu.Lock()
	c.closed, c.writing = true, false
	c.mu.Unlock()
	_ = c.ws.Close() // the reader ends the rest
	return false
}

func (c *wsConn) writeNow(msg []byte) error {
	_ = c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return c.ws.WriteMessage(gorilla.TextMessage, msg)
}

// result reads one signalled result of sub and returns its message (nil
// when there is nothing to send). A data-only result is encoded into
// *scratch, valid until the next result.
func (c *wsConn) result(sub *wsSub, scratch *[]byte) []byte {
	c.mu.Lock()
	ended := sub.ended
	c.mu.Unlock()
	if ended {
		return nil
	}
	if sub.relay != nil {
		return c.relayed(sub, scratch)
	}
	r := sub.responses(sub.readCtx)
	if r == nil {
		return c.endSub(sub)
	}
	if c.stopped(sub) {
		return nil
	}
	*scratch = appendResponse((*scratch)[:0], c.nextType(), sub.id, r)
	return *scratch
}

// relayed reads one signalled result of a relayed stream: the value's
// encoding is shared by every subscription with the same selection, so
// the executor encodes it only for the first of them.
func (c *wsConn) relayed(sub *wsSub, scratch *[]byte) []byte {
	v, ok := sub.relay.Take()
	if !ok {
		sub.responses(sub.readCtx) // reads the end
		return c.endSub(sub)
	}
	var own *graphql.Response
	data := v.Encoded(sub.shareKey, func() []byte {
		sub.relay.Pass()
		own = sub.responses(sub.readCtx)
		if own == nil || !dataOnly(own) {
			return nil // errors are this subscription's own
		}
		return bytes.Clone(own.Data) // the executor reuses its buffer
	})
	switch {
	case c.stopped(sub):
		return nil
	case data != nil:
		*scratch = appendData((*scratch)[:0], c.nextType(), sub.id, data)
		return *scratch
	case own != nil:
		*scratch = appendResponse((*scratch)[:0], c.nextType(), sub.id, own)
		return *scratch
	default:
		return c.endSub(sub)
	}
}

// stopped reports whether the client completed the subscription.
func (c *wsConn) stopped(sub *wsSub) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sub.stopped
}
