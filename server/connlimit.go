package server

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ConnLimits bound the connections a listener keeps open: in total, so
// the server keeps file descriptors for its store, its jobs' output and
// their artifacts, and per client address, so one client cannot take
// them all. Zero means no bound.
type ConnLimits struct {
	Total     int
	PerClient int
}

// DefaultConnLimits leaves a quarter of the process's file descriptors
// (at least 1,024) to everything else, and lets one address hold 512.
func DefaultConnLimits() ConnLimits {
	var rl syscall.Rlimit
	total := 10000
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil && rl.Cur > 0 && rl.Cur < 1<<30 {
		total = int(rl.Cur) - max(1024, int(rl.Cur)/4)
	}
	return ConnLimits{Total: max(total, 64), PerClient: 512}
}

// LimitListener refuses connections past its limits as it accepts them,
// before they hold anything of the server: the refused client reads a
// 503, then the connection closes. Writing the 503 and reading what the
// client already sent (closing a socket with unread data would reset it,
// and the client lose the answer) take at most refuseTime, by at most
// maxRefusing goroutines at once; past that, a refused connection is
// reset at once.
type LimitListener struct {
	net.Listener
	limits   ConnLimits
	mu       sync.Mutex
	open     int
	byAddr   map[string]int
	refused  atomic.Int64
	refusing chan struct{}
	// closed (under mu) stops new refusals once Close waits for them.
	closed bool
	wg     sync.WaitGroup
}

const (
	maxRefusing = 64
	refuseTime  = 250 * time.Millisecond
)

// NewLimitListener wraps ln with limits.
func NewLimitListener(ln net.Listener, limits ConnLimits) *LimitListener {
	return &LimitListener{Listener: ln, limits: limits, byAddr: map[string]int{}, refusing: make(chan struct{}, maxRefusing)}
}

// Close closes the listener and waits for the refusals under way.
func (l *LimitListener) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	err := l.Listener.Close()
	l.wg.Wait()
	return err
}

// Refused counts the connections refused so far.
func (l *LimitListener) Refused() int64 { return l.refused.Load() }

// Open is the number of connections open now.
func (l *LimitListener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Accept returns the next connection within the limits.
func (l *LimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := clientAddr(c.RemoteAddr())
		if l.take(addr) {
			return &limitedConn{Conn: c, release: func() { l.give(addr) }}, nil
		}
		l.refused.Add(1)
		l.refuse(c)
	}
}

func (l *LimitListener) take(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limits.Total > 0 && l.open >= l.limits.Total {
		return false
	}
	if l.limits.PerClient > 0 && l.byAddr[addr] >= l.limits.PerClient {
		return false
	}
	l.open++
	l.byAddr[addr]++
	return true
}

func (l *LimitListener) give(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
}

// refusal is what a refused connection reads, if it reads at all.
var refusal = func() []byte {
	body := `{"errors":[{"message":"too many connections from this address or to this server; retry later","extensions":{"code":"RATE_LIMITED"}}]}`
	return []byte(fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
}()

func (l *LimitListener) refuse(c net.Conn) {
	if !l.startRefusal() { // too many refusals under way, or closing: reset this one at once
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
		return
	}
	go func() {
		defer l.wg.Done()
		defer func() { <-l.refusing }()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(refuseTime))
		// Answer once the request's headers are in, as HTTP clients expect
		// (one that reads an answer before it sent its request drops it).
		waitForHeaders(c)
		if _, err := c.Write(refusal); err != nil {
			return
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// startRefusal takes a refusal's place, unless all are taken or the
// listener is closing (an Add after Close's Wait began would race it).
func (l *LimitListener) startRefusal() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	select {
	case l.refusing <- struct{}{}:
		l.wg.Add(1)
		return true
	default:
		return false
	}
}

// waitForHeaders reads from c until the end of a request's headers, 8 KiB
// or c's deadline, whichever comes first.
func waitForHeaders(c net.Conn) {
	buf := make([]byte, 8<<10)
	n := 0
	for n < len(buf) {
		k, err := c.Read(buf[n:])
		n += k
		if err != nil || bytes.Contains(buf[:n], []byte("\r\n\r\n")) {
			return
		}
	}
}

// clientAddr is who a connection counts against: the host part of its
// remote address, or for IPv6 its /64 (one host commonly holds a whole
// /64, and could otherwise take a new address per connection).
func clientAddr(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		if tcp.IP.To4() == nil && len(tcp.IP) == net.IPv6len {
			return tcp.IP.Mask(net.CIDRMask(64, 128)).String() + "/64"
		}
		return tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// limitedConn gives its place back once, when closed (also after a
// WebSocket upgrade hijacked it).
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
