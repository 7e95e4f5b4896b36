package remote

import (
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// MaxRelayConns bounds the connections one job opens through its relay
// at once; more are closed as they come.
const MaxRelayConns = 8

// relay is the only network a sandboxed runner's job has: a Unix socket
// in its own directory, each connection to which the server dials to one
// address (its target's, allowed by the egress allow-list and checked
// there) and copies both ways. The job's network namespace is empty, so
// what it reaches is exactly this one host and port.
type relay struct {
	l      net.Listener
	target string
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	slots  chan struct{}
}

// listenRelay serves path, relaying to target (ip:port) until close.
func listenRelay(path, target string) (*relay, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	r := &relay{l: l, target: target, ctx: ctx, stop: stop, slots: make(chan struct{}, MaxRelayConns)}
	r.wg.Add(1)
	go r.serve()
	return r, nil
}

func (r *relay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.l.Accept()
		if err != nil {
			return
		}
		select {
		case r.slots <- struct{}{}:
		default:
			c.Close()
			continue
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer func() { <-r.slots }()
			r.pipe(c)
		}()
	}
}

// pipe dials the target for one connection and copies both ways until
// either side ends or the relay closes.
func (r *relay) pipe(c net.Conn) {
	defer c.Close()
	d := net.Dialer{Timeout: 10 * time.Second}
	up, err := d.DialContext(r.ctx, "tcp", r.target)
	if err != nil {
		return
	}
	defer up.Close()
	stop := context.AfterFunc(r.ctx, func() { c.Close(); up.Close() })
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(up, c)
		if t, ok := up.(*net.TCPConn); ok {
			_ = t.CloseWrite()
		}
	}()
	_, _ = io.Copy(c, up)
	c.Close()
	<-done
}

// close stops accepting, ends every relayed connection and waits for
// them.
func (r *relay) close() {
	r.stop()
	r.l.Close()
	r.wg.Wait()
}
