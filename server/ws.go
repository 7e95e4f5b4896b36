package server

import (
	"cmp"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	gorilla "github.com/gorilla/websocket"

	"github.com/capstan-dev/capstan"
)

// The live transport serves GraphQL over WebSocket with the
// graphql-transport-ws protocol and the legacy subscriptions-transport-ws
// one (subprotocol graphql-ws). It is ours rather than gqlgen's because of
// what a connection costs: gqlgen keeps four goroutines per connection
// and one per subscription. Here a connection costs one goroutine (its
// reader); a subscription costs none while idle — its stream tells the
// connection when a result is ready (live.Hook) — and a writer goroutine
// lives only while the connection has something to send. One goroutine
// keeps every connection alive. Queries and subscriptions still run
// through gqlgen's executor, so validation, middleware and resolvers are
// the same as over HTTP.

// Protocol names (Sec-WebSocket-Protocol).
const (
	protocolTransportWS = "graphql-transport-ws"
	protocolLegacy      = "graphql-ws"
)

// Close codes of graphql-transport-ws.
const (
	closeBadRequest      = 4400
	closeUnauthorized    = 4401
	closeInitTimeout     = 4408
	closeDuplicateID     = 4409
	closeTooManyInits    = 4429
	closeGoingAway       = gorilla.CloseGoingAway
	writeTimeout         = 10 * time.Second
	defaultReadBufSize   = 512
	defaultWriteBufSize  = 4096
	livenessPingsMissing = 3 // a connection silent for this many ping intervals is dead
)

// liveTransport implements graphql.Transport for WebSocket upgrades.
type liveTransport struct {
	log      *slog.Logger
	upgrader gorilla.Upgrader
	tokens   *Tokens
	watcher  *tokenWatcher
	alive    *keepalive
	initWait time.Duration
	rate     *rateLimiter
}

func newLiveTransport(cfg Config) *liveTransport {
	recheck := cfg.TokenRecheck
	if recheck <= 0 {
		recheck = DefaultTokenRecheck
	}
	done := cfg.Done
	if done == nil {
		done = make(chan struct{}) // never closed: connections end by themselves
	}
	return &liveTransport{
		log: cfg.Log,
		upgrader: gorilla.Upgrader{
			Subprotocols:    []string{protocolTransportWS, protocolLegacy},
			ReadBufferSize:  defaultReadBufSize,
			WriteBufferSize: defaultWriteBufSize,
			WriteBufferPool: &sync.Pool{}, // a write buffer is held only while writing
			CheckOrigin:     originChecker(cfg.AllowedOrigins),
		},
		tokens:   cfg.Tokens,
		watcher:  &tokenWatcher{tokens: cfg.Tokens, every: recheck, done: done, conns: map[*watchedConn]struct{}{}},
		alive:    newKeepalive(cmp.Or(cfg.PingInterval, PingInterval), done, (*wsConn).ping),
		initWait: cmp.Or(cfg.InitTimeout, InitTimeout),
		rate:     cfg.rate,
	}
}

// Supports implements graphql.Transport.
func (t *liveTransport) Supports(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// Do implements graphql.Transport. The connection's reader runs on a
// goroutine of its own so that the request's returns, and with it what
// net/http holds for the request (its buffers, a deep stack). The
// connection keeps the request context's values, not its cancellation
// (net/http cancels it when the handler returns).
func (t *liveTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	bw := &batchingWriter{ResponseWriter: w}
	ws, err := t.upgrader.Upgrade(bw, r, nil)
	if err != nil {
		return // the upgrader answered with the reason
	}
	c := &wsConn{t: t, ws: ws, wire: bw.conn, exec: exec, legacy: ws.Subprotocol() != protocolTransportWS, subs: map[string]*wsSub{}}
	go c.serve()
}

// originChecker allows requests without an Origin (not a browser), from
// the server's own host, and from hosts matching one of patterns
// (path.Match syntax: "app.example.com", "*.example.com").
func originChecker(patterns []string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		origin := r.Header.Get("Origin")
		if origin == "" {
			return true
		}
		u, err := url.Parse(origin)
		if err != nil {
			return false
		}
		if strings.EqualFold(u.Host, r.Host) {
			return true
		}
		for _, p := range patterns {
			if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(u.Host)); ok {
				return true
			}
		}
		return false
	}
}

// wsMessage is one message of either protocol.
type wsMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func encode(typ, id string, payload any) []byte {
	m := wsMessage{Type: typ, ID: id}
	if payload != nil {
		raw, ok := payload.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(payload); err != nil {
				raw, _ = json.Marshal([]map[string]any{{"message": "response not encodable: " + err.Error(), "extensions": map[string]any{"code": capstan.EINTERNAL}}})
			}
		}
		m.Payload = raw
	}
	b, _ := json.Marshal(m) // a string, a string and raw JSON
	return b
}

// encodeResponse encodes a result message. The common case (data only) is
// written directly: gqlgen's data is already JSON, and encoding/json would
// only validate and copy it again for every subscriber.
func encodeResponse(typ, id string, r *graphql.Response) []byte {
	return appendResponse(nil, typ, id, r)
}

// appendResponse is encodeResponse appending to dst where it can (data
// only); otherwise it returns a message of its own.
func appendResponse(dst []byte, typ, id string, r *graphql.Response) []byte {
	if !dataOnly(r) {
		return encode(typ, id, r)
	}
	return appendData(dst, typ, id, r.Data)
}

// dataOnly reports whether a response carries nothing but its data.
func dataOnly(r *graphql.Response) bool {
	return len(r.Errors) == 0 && len(r.Extensions) == 0 && r.Label == "" && r.Path == nil && r.HasNext == nil
}

// appendData appends a result message whose payload is data alone,
// growing b at most once.
func appendData(b []byte, typ, id string, data json.RawMessage) []byte {
	b = slices.Grow(b, len(data)+len(typ)+len(id)+48)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"payload":{"data":`...)
	if len(data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, data...)
	}
	return append(b, "}}"...)
}

// appendJSONString appends s as a JSON string. Subscription ids are
// almost always plain ASCII, which needs no escaping; anything else goes
// through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// errConnectionClosed is why the streams of a connection that ended stopped.
var errConnectionClosed = errors.New("the connection closed")
