package server

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// proxiedServer serves through a LimitListener: /hold holds its request
// until release closes, /ws upgrades and holds the WebSocket.
type proxiedServer struct {
	url     string
	l       *LimitListener
	release chan struct{}
	held    sync.WaitGroup
}

func startProxied(t *testing.T, limits ConnLimits) *proxiedServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &proxiedServer{url: "http://" + ln.Addr().String(), l: NewLimitListener(ln, limits), release: make(chan struct{})}
	up := websocket.Upgrader{}
	// sockets counts the WebSockets' readers; once the cleanup waits for
	// them (closed), a handler still upgrading starts none: Add after
	// Wait began is a race.
	var (
		sockets sync.WaitGroup
		mu      sync.Mutex
		closed  bool
	)
	mux := http.NewServeMux()
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		s.held.Done()
		<-s.release
	})
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if closed {
			c.Close()
			return
		}
		sockets.Add(1)
		go func() { // the connection outlives its handler, as the server's own transport's does
			defer sockets.Done()
			defer c.Close()
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return
				}
			}
		}()
	})
	srv := &http.Server{Handler: s.l.ClientLimits(mux), ConnContext: WithConn}
	go func() { _ = srv.Serve(s.l) }()
	t.Cleanup(func() {
		close(s.release)
		_ = srv.Close()
		mu.Lock()
		closed = true
		mu.Unlock()
		sockets.Wait()
	})
	return s
}

// hold sends a request that the server holds, naming forwarded as the
// client; it returns once the server holds it.
func (s *proxiedServer) hold(t *testing.T, forwarded string) {
	s.held.Add(1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/hold", nil)
		req.Header.Set("X-Forwarded-For", forwarded)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	s.held.Wait()
}

// get answers a request naming forwarded: its status and the client its
// refusal names.
func (s *proxiedServer) get(t *testing.T, path, forwarded string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("X-Forwarded-For", forwarded)
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var e struct {
		Errors []struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	client := ""
	if json.Unmarshal(body, &e) == nil && len(e.Errors) > 0 {
		client, _ = e.Errors[0].Extensions["client"].(string)
		require.Equal(t, "RATE_LIMITED", e.Errors[0].Extensions["code"])
	}
	return resp.StatusCode, client
}

// TestClientsBehindATrustedProxy: behind a reverse proxy every client
// shares the proxy's address. Keyed by that address, one client's
// connections lock out a viewer's only one; keyed by the client the
// proxy names (--trusted-proxies, --client-address-header), each client
// has its own places, a client cannot borrow another's by writing the
// header itself, and a refusal names the key it counts against. A
// WebSocket keeps its client's place until it closes.
func TestClientsBehindATrustedProxy(t *testing.T) {
	t.Run("keyed by the proxy's address, a viewer is locked out", func(t *testing.T) {
		s := startProxied(t, ConnLimits{PerClient: 2})
		s.hold(t, "203.0.113.7")
		s.hold(t, "203.0.113.7")
		status, client := s.get(t, "/", "198.51.100.9")
		require.Equal(t, http.StatusServiceUnavailable, status)
		require.Equal(t, "127.0.0.1", client, "the refusal names the key: the proxy's address")
	})
	t.Run("keyed by the client the proxy names", func(t *testing.T) {
		s := startProxied(t, ConnLimits{PerClient: 2, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
		s.hold(t, "203.0.113.7")
		s.hold(t, "10.9.9.9, 203.0.113.7") // a value the client wrote itself, then what the proxy saw
		status, client := s.get(t, "/", "203.0.113.7")
		require.Equal(t, http.StatusServiceUnavailable, status)
		require.Equal(t, "203.0.113.7", client)
		status, client = s.get(t, "/", "198.51.100.9, 203.0.113.7")
		require.Equal(t, http.StatusServiceUnavailable, status, "writing another's address first does not borrow its places")
		require.Equal(t, "203.0.113.7", client)
		status, _ = s.get(t, "/", "198.51.100.9")
		require.Equal(t, http.StatusNotFound, status, "the viewer's only connection is served")

		// A WebSocket keeps its client's place while it is open, and
		// gives it back when it closes.
		dial := func(forwarded string) (*websocket.Conn, int) {
			h := http.Header{}
			h.Set("X-Forwarded-For", forwarded)
			c, resp, err := websocket.DefaultDialer.Dial("ws"+s.url[len("http"):]+"/ws", h)
			if err != nil {
				return nil, resp.StatusCode
			}
			return c, http.StatusSwitchingProtocols
		}
		a, code := dial("192.0.2.1")
		require.Equal(t, http.StatusSwitchingProtocols, code)
		b, code := dial("192.0.2.1")
		require.Equal(t, http.StatusSwitchingProtocols, code)
		_, code = dial("192.0.2.1")
		require.Equal(t, http.StatusServiceUnavailable, code, "two open sockets are the client's two places")
		a.Close()
		require.Eventually(t, func() bool {
			c, code := dial("192.0.2.1")
			if c != nil {
				c.Close()
			}
			return code == http.StatusSwitchingProtocols
		}, 10*time.Second, 20*time.Millisecond, "a closed socket gives its place back")
		b.Close()
	})
	require.Equal(t, "10.0.0.1", (&LimitListener{limits: ConnLimits{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}}).
		forwardedClient(http.Header{"X-Forwarded-For": {"not-an-address, 10.0.0.1"}}, netip.MustParseAddr("127.0.0.1")))
	require.Equal(t, "127.0.0.1", (&LimitListener{limits: ConnLimits{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}}).
		forwardedClient(http.Header{"X-Forwarded-For": {"10.0.0.1, junk"}}, netip.MustParseAddr("127.0.0.1")), "a malformed entry ends the reading")
}

// TestARefusedUpgradeGivesItsPlaceBack: a request that asks for a
// WebSocket and is answered without one (a refused token, a wrong path)
// holds its client's place only while it runs, not for as long as the
// proxy keeps the connection: three of them in a row, then an ordinary
// request, are all served.
func TestARefusedUpgradeGivesItsPlaceBack(t *testing.T) {
	s := startProxied(t, ConnLimits{PerClient: 2, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	client := &http.Client{} // keep-alive: one connection, as a proxy's pool
	for range 3 {
		req, err := http.NewRequest(http.MethodGet, s.url+"/nothing-here", nil)
		require.NoError(t, err)
		req.Header.Set("X-Forwarded-For", "203.0.113.7")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Connection", "Upgrade")
		resp, err := client.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
	}
	status, _ := s.get(t, "/", "203.0.113.7")
	require.Equal(t, http.StatusNotFound, status, "no place was kept")
}
