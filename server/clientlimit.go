package server

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

type connKey struct{}

// WithConn is an http.Server's ConnContext: each request's context holds
// its connection, so a WebSocket through a trusted proxy keeps its
// client's place for as long as the connection lives.
func WithConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// ClientLimits counts each request a trusted proxy carries against the
// client the proxy names (ConnLimits.ClientHeader), at most PerClient at
// once: a request while it runs, a WebSocket or an event stream while it
// is open. A client past its limit gets 503 RATE_LIMITED naming the key
// it counts against; every other client behind the same proxy keeps its
// own places. Requests from any other peer were counted at accept, by
// their address.
func (l *LimitListener) ClientLimits(next http.Handler) http.Handler {
	if l == nil || len(l.limits.TrustedProxies) == 0 || l.limits.PerClient <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil || !inPrefixes(peer.Addr().Unmap(), l.limits.TrustedProxies) {
			next.ServeHTTP(w, r)
			return
		}
		key := l.forwardedClient(r.Header, peer.Addr())
		if !l.takeClient(key) {
			l.refused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write(refusalBody(key))
			return
		}
		hw := &hijackWatch{ResponseWriter: w}
		next.ServeHTTP(hw, r)
		if c, ok := r.Context().Value(connKey{}).(*limitedConn); ok && hw.hijacked {
			// A WebSocket: the proxy gave it a connection of its own, and
			// the place is the connection's until it closes.
			c.alsoRelease(func() { l.giveClient(key) })
			return
		}
		l.giveClient(key) // a request, a stream, or an upgrade that was refused: its place ends with it
	})
}

// hijackWatch notes whether the handler took the connection over (a
// WebSocket upgrade). It passes Flush (event streams) and Hijack on, and
// Unwrap for http.ResponseController.
type hijackWatch struct {
	http.ResponseWriter
	hijacked bool
}

func (h *hijackWatch) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	c, rw, err := hj.Hijack()
	if err == nil {
		h.hijacked = true
	}
	return c, rw, err
}

func (h *hijackWatch) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (h *hijackWatch) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// forwardedClient is the client a trusted proxy's request names: reading
// the header's addresses from the right (each proxy appends the peer it
// saw), the first that is not a trusted proxy itself. A header a client
// wrote before the proxies is never reached past that one. Without one,
// the proxy's own address.
func (l *LimitListener) forwardedClient(h http.Header, peer netip.Addr) string {
	name := l.limits.ClientHeader
	if name == "" {
		name = "X-Forwarded-For"
	}
	values := h.Values(name)
	for i := len(values) - 1; i >= 0; i-- {
		parts := strings.Split(values[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, ok := parseForwarded(strings.TrimSpace(parts[j]))
			if !ok {
				return clientKey(peer) // a malformed entry: nothing left of it can be trusted
			}
			if !inPrefixes(a, l.limits.TrustedProxies) {
				return clientKey(a)
			}
		}
	}
	return clientKey(peer)
}

// parseForwarded reads one address of a forwarding header: a bare
// address, or one with a port (1.2.3.4:5, [::1]:5).
func parseForwarded(v string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(v); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(v); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

func (l *LimitListener) takeClient(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.takeClientLocked(key)
}

func (l *LimitListener) giveClient(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.giveClientLocked(key)
}
