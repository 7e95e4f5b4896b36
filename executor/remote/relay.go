package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// MaxRelayConns bounds the connections one job opens through its relay
// at once; more are closed as they come.
const MaxRelayConns = 8

// relay is the only network a sandboxed runner's job has: a Unix socket
// in its own directory, each connection to which the server dials to one
// address (its target's, allowed by the egress allow-list and checked
// there) and copies both ways — once the far end has said it is an SSH
// server (its version line, which sshd sends first): the job cannot use
// it to speak another protocol to another service on that host. The
// job's network namespace is empty, so what it reaches is exactly this
// one host and port, over SSH.
type relay struct {
	l      net.Listener
	target string
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	slots  chan struct{}

	mu      sync.Mutex
	refused error // the last dial or banner that failed, for the job's output
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
		if errors.Is(err, net.ErrClosed) || r.ctx.Err() != nil {
			return
		}
		if err != nil { // EMFILE and the like: the relay lives on
			r.note(fmt.Errorf("accepting: %w", err))
			select {
			case <-time.After(50 * time.Millisecond):
			case <-r.ctx.Done():
				return
			}
			continue
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

func (r *relay) note(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused = err
}

// maxBanner bounds an SSH server's version line (RFC 4253: 255 bytes).
const maxBanner = 255

// pipe dials the target for one connection, waits for its SSH version
// line, and copies both ways until either side ends or the relay closes.
func (r *relay) pipe(c net.Conn) {
	defer c.Close()
	d := net.Dialer{Timeout: 10 * time.Second}
	up, err := d.DialContext(r.ctx, "tcp", r.target)
	if err != nil {
		r.note(err)
		return
	}
	defer up.Close()
	stop := context.AfterFunc(r.ctx, func() { c.Close(); up.Close() })
	defer stop()
	_ = up.SetReadDeadline(time.Now().Add(10 * time.Second))
	in := bufio.NewReaderSize(up, maxBanner+1)
	banner, err := in.ReadSlice('\n')
	if err != nil || !strings.HasPrefix(string(banner), "SSH-2.0-") && !strings.HasPrefix(string(banner), "SSH-1.99-") {
		r.note(fmt.Errorf("%s did not answer as an SSH server (%q): the relay carries SSH alone", r.target, strings.TrimSpace(string(banner))))
		return
	}
	_ = up.SetReadDeadline(time.Time{})
	if _, err := c.Write(banner); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(up, c)
		if t, ok := up.(*net.TCPConn); ok {
			_ = t.CloseWrite()
		}
	}()
	_, _ = io.Copy(c, in)
	c.Close()
	<-done
}

// close stops accepting, ends every relayed connection, waits for them,
// and says what the relay could not do, if anything.
func (r *relay) close() error {
	r.stop()
	r.l.Close()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}
