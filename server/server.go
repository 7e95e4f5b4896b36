// Package server serves Capstan over HTTP: GraphQL at /graphql (queries and
// mutations over HTTP, subscriptions over WebSocket), the console at /,
// GraphiQL at /graphiql,
// liveness at /healthz, readiness at /readyz, Prometheus metrics at /metrics.
package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/graph"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/resolver"
	"github.com/capstan-dev/capstan/service"
)

// Limits on requests (the GraphQL ones are Limits, in bounds.go).
const (
	MaxBodyBytes = 20 << 20
	// RequestDeadline covers one request: reading it, parsing,
	// validation, execution and writing the response.
	RequestDeadline = 30 * time.Second
)

// Config configures the HTTP server.
type Config struct {
	// Collectors are more metrics for /metrics (the executor's shards,
	// the tailer's reads).
	Collectors []prometheus.Collector
	Service    *service.Service
	Tokens     *Tokens
	Log        *slog.Logger
	// Ready, when set, must also hold for /readyz (start-up work done);
	// until it does, mutations and subscriptions are UNAVAILABLE.
	Ready func() bool
	// ReadyNotes are lines /readyz adds to its answer: what the server
	// refuses or does without on this host (jobs it cannot isolate).
	ReadyNotes []string
	// Broker feeds subscriptions (none: subscriptions answer UNAVAILABLE).
	Broker *live.Broker
	// AllowedOrigins lists the host patterns browsers may open WebSockets
	// from besides the server's own host (path.Match patterns: "*.example.com").
	AllowedOrigins []string
	// MaxSubscriptions bounds the subscriptions of one connection.
	MaxSubscriptions int
	// TokenRecheck is how often a connection's token is checked again.
	TokenRecheck time.Duration
	// ProgressWindow coalesces operationProgress messages.
	ProgressWindow time.Duration
	// InitTimeout bounds the wait for a WebSocket's connection_init
	// (default 10s).
	InitTimeout time.Duration
	// PingInterval is how often WebSocket connections are pinged (default
	// 20s); one silent for three intervals is closed.
	PingInterval time.Duration
	// Done, when closed, ends every WebSocket connection (shutdown).
	Done <-chan struct{}
	// Profiling mounts net/http/pprof at /debug/pprof/ (diagnostics only).
	Profiling bool
	// TrustedDocuments is the list of documents clients may send, and
	// what is done with others (none: every document runs).
	TrustedDocuments *TrustedDocuments
	// Limits bound each GraphQL request (zero: DefaultLimits).
	Limits Limits
	// RateLimit bounds each token's requests and cost per second (zero:
	// none).
	RateLimit RateLimit
	// Introspection turns on schema introspection and "Did you mean"
	// suggestions in validation errors (dev mode, or when configured).
	Introspection bool
	// NoGraphiQL leaves GraphiQL (/graphiql) out.
	NoGraphiQL bool
	// NoConsole leaves the console (/) out.
	NoConsole bool
	// NoMetrics leaves /metrics out of Handler (MetricsHandler serves it
	// on a listener of its own).
	NoMetrics bool
	// Backup, when set, writes a backup of an organization: GET
	// /admin/backup serves it to that organization's admins (backup.go).
	Backup BackupFunc

	rate *rateLimiter
}

func (cfg Config) limits() Limits {
	if cfg.Limits == (Limits{}) {
		return DefaultLimits
	}
	return cfg.Limits
}

// GraphQL returns the GraphQL handler. HTTP requests must carry an actor in
// their context (Handler puts it there from the bearer token); WebSocket
// connections authenticate in their connection_init message.
func GraphQL(cfg Config) http.Handler {
	return graphQL(cfg, newRateLimiter(cfg.RateLimit))
}

func graphQL(cfg Config, rate *rateLimiter) http.Handler {
	cfg.rate = rate
	svc, log := cfg.Service, cfg.Log
	srv := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: &resolver.Resolver{Service: svc, Broker: cfg.Broker, ProgressWindow: cfg.ProgressWindow, Log: log,
		TrustedDocuments: cfg.TrustedDocuments.mode()}}))
	ws := newLiveTransport(cfg)
	srv.AddTransport(ws)
	srv.AddTransport(&sseTransport{watcher: ws.watcher, ping: cmp.Or(cfg.PingInterval, PingInterval)})
	srv.AddTransport(transport.Options{})
	srv.AddTransport(queriesOnlyGET{})
	srv.AddTransport(plainPost{})
	srv.AddTransport(unsupported{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	limits := cfg.limits()
	srv.Use(trustedLookup{docs: cfg.TrustedDocuments, log: log}) // before all: an unlisted document is refused unparsed
	persisted := newDocumentCache(cmp.Or(limits.PersistedQueries, DefaultLimits.PersistedQueries), cmp.Or(limits.PersistedBytes, DefaultLimits.PersistedBytes))
	srv.Use(persistedLookup{cache: persisted}) // first: every limit sees the document it names
	srv.SetParserTokenLimit(limits.MaxTokens)
	srv.Use(newShapeLimit(limits, cfg.Introspection))
	if cfg.Introspection {
		srv.Use(extension.Introspection{})
	}
	srv.SetDisableSuggestion(!cfg.Introspection)
	srv.Use(&costLimit{limit: limits.MaxCost, rate: cfg.rate})
	srv.Use(persistedKeep{cache: persisted}) // after every limit: it keeps only what passed
	srv.AroundResponses(capResponses(limits.MaxResponseBytes))
	srv.AroundOperations(resolverBudget)
	srv.AroundOperations(refusePostSubscriptions)
	srv.AroundFields(spendResolver(limits.MaxResolverCalls))
	srv.AroundOperations(refuseUntilReady(cfg.Ready))
	srv.AroundOperations(limitSubscriptions(cfg.MaxSubscriptions))
	srv.AroundOperations(rate.limitTokenSubscriptions)
	srv.SetErrorPresenter(presentError(log))
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		log.Error("resolver panic", "panic", p, "stack", string(debug.Stack()))
		return &capstan.Error{Code: capstan.EINTERNAL, Op: "graphql"}
	})
	return resolver.Middleware(svc, srv)
}

// presentError maps errors to GraphQL errors with extensions.code. Internal
// errors are logged and reach the client only as "internal error".
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var ce *capstan.Error
		if errors.As(err, &ce) {
			if ce.Code == capstan.EINTERNAL {
				log.Error("internal error", "err", err.Error(), "path", gqlErr.Path.String())
			}
			gqlErr.Message = capstan.ErrorMessage(ce)
			gqlErr.Extensions = map[string]any{"code": ce.Code}
			if len(ce.Details) > 0 {
				gqlErr.Extensions["details"] = ce.Details
			}
			for k, v := range ce.Extensions {
				gqlErr.Extensions[k] = v
			}
			return gqlErr
		}
		if code, ok := gqlErr.Extensions["code"].(string); ok && (code == capstan.ERATELIMITED || code == capstan.EUNAVAILABLE || code == PersistedQueryNotFound || code == capstan.EFORBIDDEN) {
			return gqlErr // the limits' own, and the persisted-query protocol's
		}
		if code, ok := gqlErr.Extensions["code"].(string); ok && code != "" {
			// Parse and validation failures of the request itself, and
			// the limits of bounds.go (the reason names the limit).
			gqlErr.Extensions["code"] = capstan.EINVALID
			gqlErr.Extensions["reason"] = code
			return gqlErr
		}
		var gerr *gqlerror.Error
		if errors.As(err, &gerr) && gerr.Rule != "" {
			gqlErr.Extensions = map[string]any{"code": capstan.EINVALID, "reason": gerr.Rule}
			return gqlErr
		}
		if strings.HasSuffix(err.Error(), "federated introspection disabled") { // gqlgen's federation plugin's own error
			gqlErr.Message = "_service (the subgraph's schema) follows introspection, which is off on this server: capstan serve --introspection on"
			gqlErr.Extensions = map[string]any{"code": capstan.EFORBIDDEN}
			return gqlErr
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			gqlErr.Message = "request deadline exceeded"
			gqlErr.Extensions = map[string]any{"code": capstan.EUNAVAILABLE}
			return gqlErr
		}
		if gerr != nil && gerr.Err == nil && len(gerr.Path) == 0 {
			// gqlgen's own request errors (bad variables, unknown operation).
			gqlErr.Extensions = map[string]any{"code": capstan.EINVALID}
			return gqlErr
		}
		log.Error("unclassified error", "err", err.Error())
		gqlErr.Message = "internal error"
		gqlErr.Extensions = map[string]any{"code": capstan.EINTERNAL}
		return gqlErr
	}
}

// Handler returns the whole HTTP surface.
func Handler(cfg Config) http.Handler {
	mux := http.NewServeMux()
	rate := newRateLimiter(cfg.RateLimit)
	gql := graphQL(cfg, rate)
	// The token and the token's request rate are checked from the
	// headers, before a byte of the body is read: an unauthenticated or
	// throttled caller costs no memory for what it sends.
	stream := cfg.Tokens.Authenticate(rate.limitRate(limitBody(gql)))
	request := withDeadline(cfg.Tokens.Authenticate(rate.limitRate(limitBody(gql))))
	mux.Handle("/graphql", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWebSocket(r) { // authenticated by its connection_init message
			gql.ServeHTTP(w, r)
			return
		}
		if isSSE(r) { // a stream: no request deadline
			stream.ServeHTTP(w, r)
			return
		}
		request.ServeHTTP(w, r)
	}))
	if !cfg.NoConsole {
		page, assets := console()
		mux.Handle("GET /{$}", page)
		mux.Handle("GET /assets/", assets)
		mux.Handle("GET /persisted-query-manifest.json", consoleManifest())
	}
	if !cfg.NoGraphiQL {
		page, assets := graphiql()
		mux.Handle("GET /graphiql", page)
		mux.Handle("GET /graphiql/assets/", assets)
	}
	if !cfg.NoMetrics {
		mux.Handle("GET /metrics", metrics(cfg.Broker, cfg.Collectors...))
	}
	if cfg.Backup != nil {
		mux.Handle("GET /admin/backup", cfg.Tokens.Authenticate(rate.limitRate(backupHandler(cfg.Backup, cfg.Log))))
	}
	if cfg.Profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if cfg.Ready != nil && !cfg.Ready() {
			http.Error(w, "not ready: starting", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := cfg.Service.Store.Ping(ctx); err != nil {
			http.Error(w, "not ready: "+capstan.ErrorMessage(err), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
		for _, n := range cfg.ReadyNotes {
			w.Write([]byte(n + "\n"))
		}
	})
	return mux
}

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// MaxJSONValues bounds the JSON values (numbers, strings, array and
// object elements) of a request body: 20 MiB of `[0,0,…]` variables would
// decode to some 400 MiB of heap, while a catalog import's 20 MiB
// document is one string.
const MaxJSONValues = 100000

// bodyScanFrom is the body size from which its values are counted first.
const bodyScanFrom = 64 << 10

func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, capstan.EINVALID, "request body is larger than 20 MiB")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		if r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				writeError(w, http.StatusRequestEntityTooLarge, capstan.EINVALID, "request body is larger than 20 MiB")
				return
			}
			// Refused here, never echoed: gqlgen's decode error repeats
			// the whole body.
			if !json.Valid(body) {
				writeError(w, http.StatusBadRequest, capstan.EINVALID, "the request body is not valid JSON")
				return
			}
			if len(body) > bodyScanFrom && tooManyValues(body, MaxJSONValues) {
				writeError(w, http.StatusRequestEntityTooLarge, capstan.EINVALID, fmt.Sprintf("request body has more than %d JSON values", MaxJSONValues))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// tooManyValues counts a JSON document's tokens, stopping past limit
// (what is not JSON is left to the GraphQL transport to refuse).
func tooManyValues(body []byte, limit int) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	for n := 0; ; n++ {
		if n > limit {
			return true
		}
		if _, err := dec.Token(); err != nil {
			return false
		}
	}
}

// withDeadline gives a request one deadline: its context's (parsing,
// validation, execution) and its connection's (reading the body, writing
// the response to a slow reader).
func withDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline := time.Now().Add(RequestDeadline)
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(deadline)
		_ = rc.SetWriteDeadline(deadline.Add(5 * time.Second))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// MetricsHandler serves /metrics alone, for a listener of its own.
func MetricsHandler(broker *live.Broker, more ...prometheus.Collector) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics(broker, more...))
	return mux
}
