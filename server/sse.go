package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/live"
)

// sseTransport serves GraphQL over Server-Sent Events, the "distinct
// connections" mode of the GraphQL over SSE protocol (graphql-sse): a
// POST with Accept: text/event-stream and a JSON body gets a stream of
// `event: next` (a result) and one final `event: complete`. It is the
// WebSocket transport's counterpart for clients that only speak HTTP:
// authenticated by the request's bearer token, ended when that token stops
// being valid or the server shuts down, and a stream that ends with errors
// (OVERFLOW with its cursor, UNAUTHENTICATED) says so in a last `next`
// before `complete`, never by just stopping. gqlgen's own SSE transport
// is not used because it drops such errors: they reach the transport
// through live.Hook, as on the WebSocket.
type sseTransport struct {
	watcher *tokenWatcher
	ping    time.Duration
}

// isSSE reports whether r asks for an event stream.
func isSSE(r *http.Request) bool {
	if r.Method != http.MethodPost || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return false
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mediaType == "application/json"
}

// Supports implements graphql.Transport.
func (t *sseTransport) Supports(r *http.Request) bool { return isSSE(r) }

// Do implements graphql.Transport.
func (t *sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	actor, err := capstan.ActorFrom(r.Context())
	if err != nil {
		writeError(w, http.StatusUnauthorized, capstan.EUNAUTHENTICATED, "missing or invalid bearer token")
		return
	}
	start := graphql.Now()
	var params graphql.RawParams
	dec := json.NewDecoder(io.LimitReader(r.Body, MaxMessageBytes+1))
	dec.UseNumber()
	if err := dec.Decode(&params); err != nil {
		writeError(w, http.StatusBadRequest, capstan.EINVALID, "the body must be a GraphQL request in JSON of at most 64 KiB")
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	// The stream ends when the client leaves, its token stops being
	// valid, or the server shuts down (the watcher, with the cause).
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	token, _ := bearerToken(r.Header.Get("Authorization"))
	watched := &watchedConn{token: strings.TrimSpace(token), actor: actor, end: cancel}
	t.watcher.watch(watched)
	defer t.watcher.forget(watched)

	s := &sseStream{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.SetReadDeadline(time.Time{}) // the request is read; the stream may outlive the server's ReadTimeout
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no") // proxies: do not hold the stream back
	w.WriteHeader(http.StatusOK)
	if s.write(": stream\n\n") != nil {
		return
	}
	defer s.write("event: complete\ndata:\n\n")

	rc, errs := exec.CreateOperationContext(ctx, &params)
	if errs != nil {
		s.next(exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs))
		return
	}
	if rc.Operation.Operation != ast.Subscription { // a query or mutation keeps the request deadline
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, RequestDeadline)
		defer stop()
	}
	wake := &sseSignals{c: make(chan struct{}, 1)}
	subCtx, hook := live.WithHook(graphql.WithOperationContext(ctx, rc), wake.signal)
	responses, respCtx := exec.DispatchOperation(subCtx, rc)
	readCtx := context.WithoutCancel(respCtx) // a stream's results are read after its end too
	if rc.Operation.Operation != ast.Subscription {
		readCtx = respCtx // a query or mutation resolves here: under the deadline, stopped if the client leaves
	}
	if rc.Operation.Operation != ast.Subscription || !hook.Attached() {
		for resp := responses(readCtx); resp != nil; resp = responses(readCtx) {
			if s.next(resp) != nil {
				return
			}
		}
		return
	}
	defer hook.Stop() // the subscriber left: the stream lets go of the broker
	t.follow(ctx, s, wake, hook, responses, readCtx)
}

// follow writes a subscription's results, one per signal of its stream,
// until the stream ends; then the errors it ended with, if any.
func (t *sseTransport) follow(ctx context.Context, s *sseStream, wake *sseSignals, hook *live.Hook, responses graphql.ResponseHandler, readCtx context.Context) {
	ping := time.NewTicker(t.ping)
	defer ping.Stop()
	relay := hook.Relay()
	done := ctx.Done()
	var giveUp <-chan time.Time
	for {
		select {
		case <-wake.c:
		case <-ping.C:
			if s.write(": ping\n\n") != nil {
				return
			}
			continue
		case <-done:
			// The client left, or the watcher ended the stream: tell the
			// stream, which then signals its end (with the cause's error);
			// read until then, or give up after a second.
			done, giveUp = nil, time.After(time.Second)
			hook.Stop()
			continue
		case <-giveUp:
			return
		}
		for wake.take() {
			var resp *graphql.Response
			if relay != nil {
				if _, ok := relay.Take(); ok {
					relay.Pass()
				}
			}
			if resp = responses(readCtx); resp == nil {
				if errs := hook.Errors(); len(errs) > 0 {
					s.next(&graphql.Response{Errors: errs})
				}
				return
			}
			if s.next(resp) != nil {
				return
			}
		}
	}
}

// sseSignals counts a stream's signals: each is one result, or the end.
type sseSignals struct {
	mu sync.Mutex
	n  int
	c  chan struct{}
}

func (s *sseSignals) signal() {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	select {
	case s.c <- struct{}{}:
	default:
	}
}

// take consumes one signal, if there is one.
func (s *sseSignals) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 {
		return false
	}
	s.n--
	return true
}

// sseStream writes events, each flushed at once and within writeTimeout:
// a client that stops reading holds the stream (its buffer then fills
// and it ends with OVERFLOW) but never the server for longer.
type sseStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (s *sseStream) next(resp *graphql.Response) error {
	data, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("event: next\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
	return s.write(b.String())
}

func (s *sseStream) write(event string) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := io.WriteString(s.w, event); err != nil {
		return err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}
