package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capstan-dev/capstan"
)

// Live (WebSocket) limits and timings.
const (
	DefaultMaxSubscriptions = 100
	MaxMessageBytes         = 64 << 10
	InitTimeout             = 10 * time.Second
	PingInterval            = 20 * time.Second
	DefaultTokenRecheck     = 10 * time.Second
)

// errTokenRevoked ends a connection whose token stopped being valid; its
// streams end with this error.
var errTokenRevoked = capstan.Errorf(capstan.EUNAUTHENTICATED, "the connection's token is no longer valid")

// liveConn is one WebSocket connection's state, kept in its context.
type liveConn struct {
	subscriptions atomic.Int32
}

type liveConnKey struct{}

// tokenWatcher ends connections whose token stopped being valid (expired,
// removed by a reload), and every connection when the server shuts down.
// One goroutine checks them all, so an idle connection costs no goroutine
// of its own here.
type tokenWatcher struct {
	tokens *Tokens
	every  time.Duration
	done   <-chan struct{}
	once   sync.Once
	mu     sync.Mutex
	conns  map[*watchedConn]struct{}
}

type watchedConn struct {
	token string
	actor *capstan.Actor
	// end ends the connection with the cause.
	end func(cause error)
}

// watch registers a connection until forget.
func (w *tokenWatcher) watch(c *watchedConn) {
	w.once.Do(func() { go w.run() })
	w.mu.Lock()
	w.conns[c] = struct{}{}
	w.mu.Unlock()
}

// forget unregisters a connection that ended.
func (w *tokenWatcher) forget(c *watchedConn) {
	w.mu.Lock()
	delete(w.conns, c)
	w.mu.Unlock()
}

func (w *tokenWatcher) run() {
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			w.end(func(*watchedConn) bool { return true }, errors.New("the server is shutting down"))
			return
		case <-t.C:
			w.end(func(c *watchedConn) bool {
				a := w.tokens.Lookup(c.token)
				return a == nil || a.ID != c.actor.ID || a.OrganizationID != c.actor.OrganizationID
			}, errTokenRevoked)
		}
	}
}

// end cancels the connections that match.
func (w *tokenWatcher) end(match func(*watchedConn) bool, cause error) {
	w.mu.Lock()
	var ending []*watchedConn
	for c := range w.conns {
		if match(c) {
			ending = append(ending, c)
		}
	}
	w.mu.Unlock()
	for _, c := range ending {
		c.end(cause)
	}
}

// limitSubscriptions refuses a connection's subscription beyond max.
func limitSubscriptions(max int) graphql.OperationMiddleware {
	if max <= 0 {
		max = DefaultMaxSubscriptions
	}
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		conn, _ := ctx.Value(liveConnKey{}).(*liveConn)
		oc := graphql.GetOperationContext(ctx)
		if conn == nil || oc == nil || oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
			return next(ctx)
		}
		if conn.subscriptions.Add(1) > int32(max) {
			conn.subscriptions.Add(-1)
			return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{Message: "too many subscriptions on this connection",
				Extensions: map[string]any{"code": capstan.EINVALID, "limit": max}}}})
		}
		h := next(ctx)
		var ended atomic.Bool
		return func(ctx context.Context) *graphql.Response {
			r := h(ctx)
			if r == nil && ended.CompareAndSwap(false, true) {
				conn.subscriptions.Add(-1)
			}
			return r
		}
	}
}
