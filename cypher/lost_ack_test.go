package cypher_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
)

// ackCutter is a Bolt proxy on loopback that, once armed, loses the
// answer to the next commit of an operation step: after a client sends
// a statement holding the step's Cypher, it forwards the server's
// answers until the one that carries the commit's bookmark, drops it and
// cuts the connection. The commit is made; its client never learns it.
type ackCutter struct {
	ln    net.Listener
	armed atomic.Bool
	cuts  atomic.Int64
	wg    sync.WaitGroup
}

func newAckCutter(t *testing.T, target string) *ackCutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c := &ackCutter{ln: ln}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			c.wg.Add(2)
			var marked atomic.Bool
			go func() { // client to server
				defer c.wg.Done()
				buf := make([]byte, 64<<10)
				for {
					n, err := client.Read(buf)
					if n > 0 {
						if bytes.Contains(buf[:n], []byte("UNWIND $steps AS st")) && c.armed.CompareAndSwap(true, false) {
							marked.Store(true)
						}
						if _, werr := server.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				server.Close()
			}()
			go func() { // server to client
				defer c.wg.Done()
				buf := make([]byte, 64<<10)
				for {
					n, err := server.Read(buf)
					if n > 0 {
						if marked.Load() && bytes.Contains(buf[:n], []byte("bookmark")) {
							c.cuts.Add(1)
							break // the commit's answer is lost
						}
						if _, werr := client.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				client.Close()
				server.Close()
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); c.wg.Wait() })
	return c
}

func (c *ackCutter) uri() string { return "bolt://" + c.ln.Addr().String() }

// TestALostAcknowledgementIsNotAConflict: the connection drops right
// after a step's commit, before its answer arrives; the store tries the
// step again (on the single-statement path, and in a managed transaction
// on the locked one), finds it written by itself, and reports it done,
// once: not a conflict with its own commit, and not written twice.
func TestALostAcknowledgementIsNotAConflict(t *testing.T) {
	ctx := context.Background()
	cut := newAckCutter(t, strings.TrimPrefix(server.URI, "bolt://"))
	openVia := func() *cypher.Store {
		s, err := cypher.Open(cypher.Config{URI: cut.uri(), User: server.User, Password: server.Password})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := openVia()
	org := "ack-" + capstan.NewID()[12:]
	op := startedOperation(t, s, org)
	step := func(s *cypher.Store, typ string) error {
		return s.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{{Type: typ, Actor: "executor"}}})
	}
	cut.armed.Store(true)
	require.NoError(t, step(s, "known.path"), "the single-statement path")
	require.EqualValues(t, 1, cut.cuts.Load(), "the answer was lost")

	other := openVia() // knows nothing of the operation: the locked path
	cut.armed.Store(true)
	require.NoError(t, step(other, "locked.path"), "the locked path")
	require.EqualValues(t, 2, cut.cuts.Load(), "the answer was lost")
	require.NoError(t, step(other, "after"), "the store goes on from the step")

	events, err := s.ListEvents(ctx, org, op.ID, 0, 100)
	require.NoError(t, err)
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	require.Equal(t, []string{"operation.created", "known.path", "locked.path", "after"}, types, "each step once")
}
