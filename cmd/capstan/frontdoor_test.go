package main_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAttackUnauthenticatedBodiesCostNothing: 30 clients at once send
// 20 MiB bodies without a valid token. Each is refused from its headers,
// before its body is read, so the server's memory does not grow with
// what they send.
func TestAttackUnauthenticatedBodiesCostNothing(t *testing.T) {
	t.Parallel()
	p := startGuarded(t)
	healthy(t, p)
	before := peakRSS(t, p.cmd.Process.Pid)
	body := bytes.Repeat([]byte(`{"query":"{ viewer { actor } }","variables":{"x":"`+strings.Repeat("a", 1<<10)+`"}}`), (20<<20)/1100)
	var wg sync.WaitGroup
	codes := make(chan int, 30)
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, p.url+"/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if i%2 == 0 {
				req.Header.Set("Authorization", "Bearer not-a-token-of-this-server")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil { // the server may close before the client sent it all
				codes <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		require.Contains(t, []int{0, http.StatusUnauthorized}, c)
	}
	after := peakRSS(t, p.cmd.Process.Pid)
	t.Logf("peak RSS %d MiB before, %d MiB after 30 unauthenticated 20 MiB bodies", before>>20, after>>20)
	require.Less(t, after-before, int64(48<<20), "the server read bodies it was never going to serve")
	healthy(t, p)
}

// dialFrom opens n connections to addr from the local address from
// (127.0.0.x: the whole of 127/8 is this machine's) and counts those the
// server refused: it wrote its 503 or reset them at once, where one it
// kept stays silent until the read gives up.
func dialFrom(t *testing.T, from, addr string, n int) (conns []net.Conn, refused int) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			require.True(t, errors.Is(err, syscall.ECONNRESET), "dial: %v", err)
			refused++
			continue
		}
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(1500 * time.Millisecond))
			buf := make([]byte, 64)
			k, err := io.ReadAtLeast(c, buf, 12)
			var ne net.Error
			if bytes.HasPrefix(buf[:k], []byte("HTTP/1.1 503")) || !(errors.As(err, &ne) && ne.Timeout()) {
				mu.Lock()
				refused++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return conns, refused
}

// postFrom sends one GraphQL request from a given local address.
func postFrom(p *proc, from, query string) (int, string, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}}
	req, _ := http.NewRequest(http.MethodPost, p.url+"/graphql", strings.NewReader(`{"query":"{ viewer { actor } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+attackAdmin)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// TestAttackConnectionFlood: one address opening thousands of idle
// connections holds only its share; other clients are served meanwhile
// and jobs keep their file descriptors; past the total, every new
// connection is refused with a typed 503 until some close.
func TestAttackConnectionFlood(t *testing.T) {
	p := startGuarded(t, "--max-connections", "1000", "--max-connections-per-client", "300")
	addr := strings.TrimPrefix(p.url, "http://")

	flood, refused := dialFrom(t, "127.0.0.1", addr, 3000)
	require.Equal(t, 2700, refused, "one address holds more than its share")
	code, body, err := postFrom(p, "127.0.0.2", "")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, body)

	// Three more addresses fill the server: the total holds.
	for _, from := range []string{"127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		_, refused := dialFrom(t, from, addr, 300)
		t.Logf("%s: %d of 300 refused", from, refused)
	}
	code, body, err = postFrom(p, "127.0.0.6", "")
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, `"code":"RATE_LIMITED"`)

	for _, c := range flood {
		c.Close()
	}
	require.Eventually(t, func() bool {
		code, _, err := postFrom(p, "127.0.0.6", "")
		return err == nil && code == http.StatusOK
	}, 10*time.Second, 100*time.Millisecond, "closed connections give their places back")
}
