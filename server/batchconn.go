package server

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// batchConn is a WebSocket's network connection that can hold the frames
// written while a batch is open and send them in one write when it
// closes. A commit usually brings a connection several messages at once
// (its events), and one write system call per message was the largest
// cost of delivering them. Frames written by other goroutines meanwhile
// (pings) join the batch; gorilla/websocket writes each frame whole
// under its own lock, so frames never interleave.
type batchConn struct {
	net.Conn
	mu       sync.Mutex
	batching bool
	buf      *[]byte
	// deadline is the write deadline set while batching, applied once
	// before the batch is written (gorilla sets it before every frame).
	deadline    time.Time
	newDeadline bool
}

// maxBatchBytes bounds what a batch holds before it is written anyway.
const maxBatchBytes = 64 << 10

var batchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// begin opens a batch.
func (b *batchConn) begin() {
	b.mu.Lock()
	b.batching = true
	b.mu.Unlock()
}

// flush writes what the batch holds and closes it.
func (b *batchConn) flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batching = false
	return b.writeHeld(nil)
}

// writeHeld writes the held frames followed by p, in one write, and
// returns the buffer to the pool. The caller holds mu.
func (b *batchConn) writeHeld(p []byte) error {
	if b.newDeadline {
		b.newDeadline = false
		if err := b.Conn.SetWriteDeadline(b.deadline); err != nil {
			return err
		}
	}
	if b.buf == nil {
		if len(p) == 0 {
			return nil
		}
		_, err := b.Conn.Write(p)
		return err
	}
	out := append(*b.buf, p...)
	_, err := b.Conn.Write(out)
	*b.buf = out[:0]
	batchBuffers.Put(b.buf)
	b.buf = nil
	return err
}

func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.batching {
		return len(p), b.writeHeld(p)
	}
	if b.buf == nil {
		b.buf = batchBuffers.Get().(*[]byte)
	}
	if len(*b.buf)+len(p) > maxBatchBytes {
		return len(p), b.writeHeld(p)
	}
	*b.buf = append(*b.buf, p...)
	return len(p), nil
}

// SetWriteDeadline holds the deadline while a batch is open: it applies
// to the batch's write, not to each frame.
func (b *batchConn) SetWriteDeadline(t time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.batching {
		return b.Conn.SetWriteDeadline(t)
	}
	b.deadline, b.newDeadline = t, true
	return nil
}

// Close sends what a batch still holds (a close frame written by another
// goroutine, say), then closes the connection.
func (b *batchConn) Close() error {
	b.mu.Lock()
	b.batching = false
	_ = b.writeHeld(nil)
	b.mu.Unlock()
	return b.Conn.Close()
}

// batchingWriter hands the upgrader a batchConn when it hijacks the
// connection.
type batchingWriter struct {
	http.ResponseWriter
	conn *batchConn
}

func (w *batchingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the response cannot be hijacked")
	}
	c, rw, err := h.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = &batchConn{Conn: c}
	return w.conn, rw, nil
}
