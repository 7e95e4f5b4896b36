package server

import (
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClientAddr(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"127.0.0.1:5000", "127.0.0.1"},
		{"[::ffff:10.0.0.1]:80", "10.0.0.1"},
		{"[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:443", "2001:db8:1:3::/64"},
		{"[::1]:80", "::/64"},
	} {
		a, err := net.ResolveTCPAddr("tcp", c.addr)
		require.NoError(t, err)
		require.Equal(t, c.want, clientAddr(a), c.addr)
	}
}

// TestCloseWhileRefusing closes the listener while a flood is refused:
// no refusal starts after Close began to wait (go test -race checks the
// WaitGroup), and Close returns.
func TestCloseWhileRefusing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := NewLimitListener(ln, ConnLimits{Total: 1})
	var served sync.WaitGroup
	served.Add(1)
	go func() {
		defer served.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // holds the one place
		}
	}()
	var dialers sync.WaitGroup
	for range 8 {
		dialers.Add(1)
		go func() {
			defer dialers.Done()
			for range 50 {
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	require.NoError(t, l.Close())
	served.Wait()
	dialers.Wait()
	require.False(t, l.startRefusal(), "a closed listener starts no refusal")
}
