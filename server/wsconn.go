package server

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	gorilla "github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/guard"
	"github.com/capstan-dev/capstan/live"
)

// wsConn is one WebSocket connection. Its reader runs on the request's
// goroutine; everything it sends goes through one queue, written by a
// writer goroutine that exists only while the queue is not empty.
type wsConn struct {
	t      *liveTransport
	ws     *gorilla.Conn
	wire   *batchConn // under ws: the writer sends a batch of frames at once
	exec   graphql.GraphExecutor
	legacy bool

	// ctx carries the actor after connection_init. It is never
	// cancelled: each stream has its own context, which the connection
	// cancels with cause when the connection ends, its token is revoked or
	// the server stops (a parent context would keep a record of every
	// child: memory per idle subscription).
	ctx         context.Context
	cause       error // why the connection ended (under mu)
	initialised bool
	// watched is the connection as the token watcher knows it (after init).
	watched *watchedConn

	mu      sync.Mutex
	queue   []outbound
	writing bool
	closed  bool
	closing bool // ended by the server: close once the streams reported
	subs    map[string]*wsSub
}

// outbound is a message, a subscription with a result ready, a ping, or
// the close.
type outbound struct {
	msg   []byte
	sub   *wsSub
	ping  bool
	close bool
}

// wsSub is one subscription. Its results are read from readCtx, which is
// never cancelled: the stream signals every value and its end (live.Hook),
// so a read never waits.
type wsSub struct {
	id        string
	readCtx   context.Context
	cancel    context.CancelCauseFunc // nil before the stream starts
	hook      *live.Hook
	responses graphql.ResponseHandler
	// relay, for a stream that lets the connection take its values, and
	// shareKey, its selection (selectionKey): results are encoded once
	// for every subscription with the same key.
	relay    live.Relay
	shareKey string
	early    int  // results signalled before responses was set
	stopped  bool // the client completed it: read, but send nothing
	ended    bool
}

func (c *wsConn) serve() {
	c.ctx = context.Background()
	defer c.end()
	defer guard.Recover(c.t.log, "websocket reader", c.internalError)
	c.ws.SetReadLimit(MaxMessageBytes)
	_ = c.ws.SetReadDeadline(time.Now().Add(c.t.initWait))
	c.ws.SetPongHandler(func(string) error { c.alive(); return nil })
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			var ne net.Error
			if !c.initialised && errors.As(err, &ne) && ne.Timeout() {
				c.closeNow(closeInitTimeout, "Connection initialisation timeout")
			} else if errors.Is(err, gorilla.ErrReadLimit) {
				c.closeNow(gorilla.CloseMessageTooBig, "message too big")
			}
			return
		}
		c.alive()
		if !c.onStackOfItsOwn(data) {
			return
		}
	}
}

// onStackOfItsOwn decodes and handles one client message on a goroutine
// of its own and waits for it. Decoding and authenticating take a deep
// stack; done on the reader, that stack would stay with every idle
// connection (the runtime seldom shrinks it), while the reader itself
// needs little. Client messages are rare, so the extra goroutine is cheap.
func (c *wsConn) onStackOfItsOwn(data []byte) bool {
	done := make(chan bool, 1)
	go func() {
		defer guard.Recover(c.t.log, "websocket message", func(err error) { c.internalError(err); done <- false })
		done <- c.decodeAndHandle(data)
	}()
	return <-done
}

// internalError ends the connection after a panic in one of its
// goroutines: its client is told (close code 1011), every other
// connection goes on.
func (c *wsConn) internalError(error) {
	c.closeNow(gorilla.CloseInternalServerErr, "internal error")
}

func (c *wsConn) decodeAndHandle(data []byte) bool {
	m, err := decodeClientMessage(data)
	if err != nil {
		c.closeNow(closeBadRequest, "Invalid message received")
		return false
	}
	return c.handle(m)
}

// alive pushes the read deadline: a connection that answers neither
// pings nor sends anything for a few ping intervals is dead.
func (c *wsConn) alive() {
	if c.initialised {
		_ = c.ws.SetReadDeadline(time.Now().Add(livenessPingsMissing * c.t.alive.every))
	}
}

// handle acts on one client message; false ends the connection.
func (c *wsConn) handle(m wsMessage) bool {
	switch m.Type {
	case "connection_init":
		if c.initialised {
			c.closeNow(closeTooManyInits, "Too many initialisation requests")
			return false
		}
		return c.init(m.Payload)
	case "ping":
		c.enqueue(encode("pong", "", nil))
	case "pong", "ka":
	case "subscribe", "start":
		if !c.initialised {
			c.closeNow(closeUnauthorized, "Unauthorized")
			return false
		}
		return c.subscribe(m.ID, m.Payload)
	case "complete", "stop":
		c.stop(m.ID)
	case "connection_terminate":
		return false
	default:
		c.closeNow(closeBadRequest, "Invalid message type "+m.Type)
		return false
	}
	return true
}

// init authenticates the connection from its connection_init payload.
func (c *wsConn) init(payload json.RawMessage) bool {
	token, err := decodeInit(payload)
	if err != nil {
		c.closeNow(closeBadRequest, "Invalid connection_init payload")
		return false
	}
	a := c.t.tokens.Lookup(token)
	if a == nil {
		const msg = "UNAUTHENTICATED: connection_init needs a valid token"
		if c.legacy {
			c.writeNow(encode("connection_error", "", map[string]any{"message": msg, "extensions": map[string]any{"code": capstan.EUNAUTHENTICATED}}))
		}
		c.closeNow(closeUnauthorized, msg)
		return false
	}
	ctx := context.WithValue(capstan.WithActor(c.ctx, a), liveConnKey{}, &liveConn{})
	c.ctx = ctx
	c.initialised = true
	c.alive()
	c.watched = &watchedConn{token: token, actor: a, end: c.revoke}
	c.t.watcher.watch(c.watched)
	c.t.alive.add(c)
	c.enqueue(encode("connection_ack", "", nil))
	return true
}

// revoke ends the connection from outside (a revoked token, the
// shutdown): its context ends with the cause, the streams report, then the
// server closes the socket.
func (c *wsConn) revoke(cause error) {
	c.mu.Lock()
	if c.closed || c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	subs := c.endLocked(cause)
	idle := len(c.subs) == 0
	c.mu.Unlock()
	c.stopStreams(subs, cause)
	if idle {
		c.push(outbound{close: true})
		return
	}
	time.AfterFunc(time.Second, func() { c.push(outbound{close: true}) }) // streams that never report
}

// subscribe starts an operation: a subscription waits on its stream's
// signals; anything else (a query, a mutation, a subscription refused
// before its stream began) runs once.
func (c *wsConn) subscribe(id string, payload json.RawMessage) bool {
	c.mu.Lock()
	_, dup := c.subs[id]
	c.mu.Unlock()
	if dup || id == "" {
		c.closeNow(closeDuplicateID, "Subscriber for "+id+" already exists")
		return false
	}
	start := graphql.Now()
	params, err := decodeSubscribe(payload)
	if err != nil {
		c.closeNow(closeBadRequest, "Invalid subscribe payload")
		return false
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	sub := &wsSub{id: id}
	c.mu.Lock()
	c.subs[id] = sub
	c.mu.Unlock()
	go c.dispatch(sub, params)
	return true
}

// dispatch runs the operation on a goroutine of its own, so the reader's
// stack stays small: an idle connection is mostly its reader.
func (c *wsConn) dispatch(sub *wsSub, params *graphql.RawParams) {
	defer guard.Recover(c.t.log, "websocket subscription", c.internalError)
	id := sub.id
	actor, _ := capstan.ActorFrom(c.ctx)
	if wait, ok := c.t.rate.allowRequest(actor); !ok {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
		refused := rateLimited("too many operations for this token; retry in "+wait.Round(time.Millisecond).String(), wait)
		c.enqueue(encode(c.nextType(), id, &graphql.Response{Errors: gqlerror.List{refused}}))
		c.enqueue(encode("complete", id, nil))
		return
	}
	// One deadline covers a query's or mutation's parsing, validation and
	// execution; a subscription lives as long as its connection.
	opCtx, stop := context.WithTimeout(c.ctx, RequestDeadline)
	defer stop()
	// The trace start is the operation's own (gqlgen reads it here only).
	rc, errs := c.exec.CreateOperationContext(graphql.StartOperationTrace(opCtx), params)
	if errs != nil {
		resp := c.exec.DispatchError(graphql.WithOperationContext(c.ctx, rc), errs)
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			c.enqueue(encode("error", id, resp.Errors))
			return
		}
		c.enqueue(encode(c.nextType(), id, resp))
		c.enqueue(encode("complete", id, nil))
		return
	}
	runCtx := c.ctx
	if rc.Operation.Operation != ast.Subscription {
		runCtx = opCtx
	}
	subCtx, cancel := context.WithCancelCause(graphql.WithOperationContext(runCtx, rc))
	subCtx, hook := live.WithHook(subCtx, func() { c.ready(sub) })
	c.mu.Lock()
	sub.cancel, sub.hook = cancel, hook
	early := c.cause // the connection ended meanwhile
	if early == nil && sub.stopped {
		early = context.Canceled // completed by the client before it started
	}
	c.mu.Unlock()
	if early != nil {
		c.stopStream(sub, early)
	}
	responses, respCtx := c.exec.DispatchOperation(subCtx, rc)
	sub.readCtx = context.WithoutCancel(respCtx)
	if rc.Operation.Operation != ast.Subscription {
		// Results are read after a client's complete too, but not after
		// the deadline.
		deadline, _ := opCtx.Deadline()
		readCtx, stopRead := context.WithDeadline(sub.readCtx, deadline)
		defer stopRead()
		sub.readCtx = readCtx
	}
	if rc.Operation.Operation != ast.Subscription || !hook.Attached() {
		c.once(sub, responses)
		return
	}
	relay, key := hook.Relay(), ""
	if relay != nil {
		key = selectionKey(rc)
	}
	c.mu.Lock()
	sub.responses, sub.relay, sub.shareKey = responses, relay, key
	for range sub.early {
		c.pushLocked(outbound{sub: sub})
	}
	c.mu.Unlock()
}

func (c *wsConn) nextType() string {
	if c.legacy {
		return "data"
	}
	return "next"
}

// once sends every response of a one-shot operation, then its end.
func (c *wsConn) once(sub *wsSub, responses graphql.ResponseHandler) {
	for r := responses(sub.readCtx); r != nil; r = responses(sub.readCtx) {
		c.enqueue(encodeResponse(c.nextType(), sub.id, r))
	}
	if msg := c.endSub(sub); msg != nil {
		c.enqueue(msg)
	}
}

// stop ends a subscription the client completed.
func (c *wsConn) stop(id string) {
	c.mu.Lock()
	sub := c.subs[id]
	if sub != nil {
		sub.stopped = true
	}
	c.mu.Unlock()
	if sub != nil {
		c.stopStream(sub, nil) // its stream ends and signals; the writer drains it
	}
}

// ready is a subscription's stream signalling a result or its end.
func (c *wsConn) ready(sub *wsSub) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sub.responses == nil {
		sub.early++
		return
	}
	c.pushLocked(outbound{sub: sub})
}

// endSub forgets an ended subscription and returns its last message: the
// errors its stream ended with, or complete (nothing after a client's
// complete).
func (c *wsConn) endSub(sub *wsSub) []byte {
	c.mu.Lock()
	if sub.ended {
		c.mu.Unlock()
		return nil
	}
	sub.ended = true
	if c.subs[sub.id] == sub {
		delete(c.subs, sub.id)
	}
	closeNow := c.closing && len(c.subs) == 0
	stopped := sub.stopped
	c.mu.Unlock()
	c.stopStream(sub, nil)
	var msg []byte
	if !stopped {
		if errs := sub.hook.Errors(); len(errs) > 0 {
			msg = encode("error", sub.id, errs)
		} else {
			msg = encode("complete", sub.id, nil)
		}
	}
	if closeNow {
		defer c.push(outbound{close: true})
	}
	return msg
}

// closeCode says why the server ends a connection.
func (c *wsConn) closeCode() (int, string) {
	c.mu.Lock()
	cause := c.cause
	c.mu.Unlock()
	if capstan.ErrorCode(cause) == capstan.EUNAUTHENTICATED {
		return closeUnauthorized, "the connection's token is no longer valid"
	}
	return closeGoingAway, "the server is shutting down"
}

// closeNow sends a close frame and closes the socket.
func (c *wsConn) closeNow(code int, reason string) {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	_ = c.ws.WriteControl(gorilla.CloseMessage, gorilla.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	_ = c.ws.Close()
}

// end runs when the reader stops: every stream ends, the socket closes.
func (c *wsConn) end() {
	c.t.alive.remove(c)
	if c.watched != nil {
		c.t.watcher.forget(c.watched)
	}
	c.mu.Lock()
	c.closed = true
	subs := c.endLocked(errConnectionClosed)
	c.mu.Unlock()
	c.stopStreams(subs, errConnectionClosed)
	_ = c.ws.Close()
}

// endLocked records why the connection ends (the first cause stays) and
// returns its subscriptions, to stop (c.mu held).
func (c *wsConn) endLocked(cause error) []*wsSub {
	if c.cause == nil {
		c.cause = cause
	}
	subs := make([]*wsSub, 0, len(c.subs))
	for _, s := range c.subs {
		subs = append(subs, s)
	}
	return subs
}

func (c *wsConn) stopStreams(subs []*wsSub, cause error) {
	for _, s := range subs {
		c.stopStream(s, cause)
	}
}

// stopStream cancels the stream's context with cause and tells it its
// subscriber left (live.Hook). Before the stream started there is nothing
// to stop: dispatch sees why and stops it as it starts.
func (c *wsConn) stopStream(s *wsSub, cause error) {
	c.mu.Lock()
	cancel, hook := s.cancel, s.hook
	c.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel(cause)
	hook.Stop()
}
