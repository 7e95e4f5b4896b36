package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
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
	// TrustedProxies are the reverse proxies whose connections carry many
	// clients: their connections count toward Total only, and each
	// request through them counts against the client its ClientHeader
	// names (ClientLimits), so one client behind the proxy cannot take
	// every other's place.
	TrustedProxies []netip.Prefix
	// ClientHeader names the client behind a trusted proxy: a list of
	// addresses (X-Forwarded-For's form), read from the right, the first
	// one that is not a trusted proxy (default X-Forwarded-For).
	ClientHeader string
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
		if l.proxy(c.RemoteAddr()) {
			addr = "" // a trusted proxy's connection carries many clients: counted per request (ClientLimits)
		}
		if l.take(addr) {
			return &limitedConn{Conn: c, release: []func(){func() { l.give(addr) }}}, nil
		}
		l.refused.Add(1)
		l.refuse(c, addr)
	}
}

// proxy reports whether a peer is one of the trusted proxies.
func (l *LimitListener) proxy(a net.Addr) bool {
	if len(l.limits.TrustedProxies) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && inPrefixes(ap.Addr().Unmap(), l.limits.TrustedProxies)
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// take takes a connection's place, and its client's ("" for a trusted
// proxy's connection: Total only).
func (l *LimitListener) take(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limits.Total > 0 && l.open >= l.limits.Total {
		return false
	}
	if addr != "" && !l.takeClientLocked(addr) {
		return false
	}
	l.open++
	return true
}

func (l *LimitListener) takeClientLocked(key string) bool {
	if l.limits.PerClient > 0 && l.byAddr[key] >= l.limits.PerClient {
		return false
	}
	l.byAddr[key]++
	return true
}

func (l *LimitListener) give(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if addr != "" {
		l.giveClientLocked(addr)
	}
}

func (l *LimitListener) giveClientLocked(key string) {
	if l.byAddr[key]--; l.byAddr[key] <= 0 {
		delete(l.byAddr, key)
	}
}

// refusalBody says which limit refused: the client's, naming the key it
// counts against, or the server's.
func refusalBody(client string) []byte {
	msg := "too many connections to this server; retry later"
	if client != "" {
		msg = "too many connections from client " + client + "; retry later"
	}
	body, _ := json.Marshal(map[string]any{"errors": []any{map[string]any{"message": msg, "extensions": map[string]any{"code": "RATE_LIMITED", "client": client}}}})
	return body
}

// refusal is what a refused connection reads, if it reads at all.
func refusal(client string) []byte {
	body := refusalBody(client)
	return []byte(fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
}

func (l *LimitListener) refuse(c net.Conn, client string) {
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
		if _, err := c.Write(refusal(l.refusedClient(client))); err != nil {
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
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return clientKey(ap.Addr())
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// refusedClient is the key a refusal names: the client's when its own
// limit was met, "" when the server's total was.
func (l *LimitListener) refusedClient(client string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if client != "" && l.limits.PerClient > 0 && l.byAddr[client] >= l.limits.PerClient {
		return client
	}
	return ""
}

// limitedConn gives its place back once, when closed (also after a
// WebSocket upgrade hijacked it), and what was added to it since (the
// place of the client a trusted proxy's WebSocket carries).
type limitedConn struct {
	net.Conn
	mu      sync.Mutex
	closed  bool
	release []func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.mu.Lock()
	release := c.release
	c.release, c.closed = nil, true
	c.mu.Unlock()
	for _, f := range release {
		f()
	}
	return err
}

// alsoRelease adds f to what the connection gives back when it closes
// (at once if it is closed already).
func (c *limitedConn) alsoRelease(f func()) {
	c.mu.Lock()
	if !c.closed {
		c.release = append(c.release, f)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	f()
}

// clientKey is what one client's connections count against: its address,
// or for IPv6 its /64.
func clientKey(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		return netip.PrefixFrom(a, 64).Masked().String()
	}
	return a.String()
}
