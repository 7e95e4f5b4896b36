package remote

import (
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTheRelayCarriesSSHAlone: a target that does not open with an SSH
// version line gets nothing relayed (the job cannot speak Redis to the
// host's port 6379 through it), and the relay says why; one that does is
// relayed both ways, its banner first.
func TestTheRelayCarriesSSHAlone(t *testing.T) {
	serve := func(banner string) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		var served sync.WaitGroup
		t.Cleanup(func() { l.Close(); served.Wait() })
		served.Add(1)
		go func() {
			defer served.Done()
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				served.Add(1)
				go func() {
					defer served.Done()
					defer c.Close()
					c.Write([]byte(banner))
					buf := make([]byte, 64)
					n, _ := c.Read(buf)
					c.Write([]byte("echo:" + string(buf[:n])))
				}()
			}
		}()
		return l.Addr().String()
	}
	through := func(target string) (string, error) {
		rl, err := listenRelay(filepath.Join(t.TempDir(), "s"), target)
		require.NoError(t, err)
		c, err := net.Dial("unix", rl.l.Addr().String())
		require.NoError(t, err)
		c.Write([]byte("PING\r\n"))
		got, _ := io.ReadAll(c)
		c.Close()
		return string(got), rl.close()
	}
	got, err := through(serve("-ERR unknown command\r\n"))
	require.Empty(t, got, "nothing of a non-SSH service is relayed")
	require.ErrorContains(t, err, "did not answer as an SSH server")
	got, err = through(serve("SSH-2.0-OpenSSH_9.2\r\n"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(got, "SSH-2.0-OpenSSH_9.2\r\necho:PING"), got)
}

// TestTheRelayHoldsAtMostMaxRelayConns: a job that opens more
// connections than MaxRelayConns at once gets the extra ones closed at
// once; the target sees no more than the bound.
func TestTheRelayHoldsAtMostMaxRelayConns(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	accepted := make(chan net.Conn, 64)
	serving := make(chan struct{})
	go func() {
		defer close(serving)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c // before the banner: a client that read it finds the connection counted
			c.Write([]byte("SSH-2.0-held\r\n"))
		}
	}()
	rl, err := listenRelay(filepath.Join(t.TempDir(), "s"), l.Addr().String())
	require.NoError(t, err)
	var held []net.Conn
	for range MaxRelayConns {
		c, err := net.Dial("unix", rl.l.Addr().String())
		require.NoError(t, err)
		buf := make([]byte, 14)
		_, err = io.ReadFull(c, buf) // relayed: the target's banner
		require.NoError(t, err)
		held = append(held, c)
	}
	extra, err := net.Dial("unix", rl.l.Addr().String())
	require.NoError(t, err)
	got, _ := io.ReadAll(extra) // closed at once, nothing relayed
	require.Empty(t, got)
	require.Len(t, accepted, MaxRelayConns, "the target saw the bound, no more")
	for _, c := range held {
		c.Close()
	}
	require.NoError(t, rl.close())
	l.Close()
	<-serving
	close(accepted)
	for c := range accepted {
		c.Close()
	}
}
