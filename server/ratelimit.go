package server

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"golang.org/x/time/rate"

	"github.com/capstan-dev/capstan"
)

// RateLimit bounds what one token may ask per second: requests (HTTP
// requests and WebSocket subscribe messages) and their summed cost. Zero
// fields mean no limit.
type RateLimit struct {
	// Requests per second, with bursts of up to RequestBurst.
	Requests     float64
	RequestBurst int
	// Cost per second, with bursts of up to CostBurst (at least the cost
	// limit, so any admitted request can run once).
	Cost      float64
	CostBurst int
	// Subscriptions bounds the subscriptions one token holds open at once,
	// over every connection and stream (0: no limit).
	Subscriptions int
}

// DefaultRateLimit is the rate limit of `capstan serve`.
var DefaultRateLimit = RateLimit{Requests: 50, RequestBurst: 100, Cost: 100000, CostBurst: 200000, Subscriptions: 1000}

// rateLimiter keeps a pair of token buckets per actor (one actor per
// token). Actors come only from the tokens file, so the map is bounded
// by it.
type rateLimiter struct {
	cfg     RateLimit
	mu      sync.Mutex
	buckets map[string]*actorBuckets
}

type actorBuckets struct {
	requests, cost *rate.Limiter
	subscriptions  atomic.Int32
}

func newRateLimiter(cfg RateLimit) *rateLimiter {
	return &rateLimiter{cfg: cfg, buckets: map[string]*actorBuckets{}}
}

func (l *rateLimiter) of(a *capstan.Actor) *actorBuckets {
	key := a.OrganizationID + "\x00" + a.ID
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		b = &actorBuckets{requests: limiter(l.cfg.Requests, l.cfg.RequestBurst), cost: limiter(l.cfg.Cost, l.cfg.CostBurst)}
		l.buckets[key] = b
	}
	return b
}

func limiter(perSecond float64, burst int) *rate.Limiter {
	if perSecond <= 0 {
		return rate.NewLimiter(rate.Inf, 0)
	}
	return rate.NewLimiter(rate.Limit(perSecond), max(burst, 1))
}

// allowRequest takes one request from the actor's bucket, or says how
// long to wait.
func (l *rateLimiter) allowRequest(a *capstan.Actor) (time.Duration, bool) {
	if l == nil || a == nil {
		return 0, true
	}
	r := l.of(a).requests.Reserve()
	if d := r.Delay(); d > 0 {
		r.Cancel()
		return d, false
	}
	return 0, true
}

// chargeCost takes an operation's cost from its actor's bucket.
func (l *rateLimiter) chargeCost(ctx context.Context, cost int) *gqlerror.Error {
	if l == nil {
		return nil
	}
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil
	}
	b := l.of(a).cost
	if b.Limit() == rate.Inf {
		return nil
	}
	r := b.ReserveN(time.Now(), cost)
	if !r.OK() {
		return rateLimited(fmt.Sprintf("the operation costs %d, more than the %d this token may spend at once", cost, b.Burst()), 0)
	}
	if d := r.Delay(); d > 0 {
		r.Cancel()
		return rateLimited(fmt.Sprintf("this token spent its cost budget (%.0f per second); retry in %s", float64(b.Limit()), d.Round(time.Millisecond)), d)
	}
	return nil
}

func rateLimited(msg string, retry time.Duration) *gqlerror.Error {
	err := gqlerror.Errorf("%s", msg)
	err.Extensions = map[string]any{"code": capstan.ERATELIMITED}
	if retry > 0 {
		err.Extensions["retryAfterSeconds"] = math.Ceil(retry.Seconds())
	}
	return err
}

// limitTokenSubscriptions refuses a subscription past the token's
// limit; each one frees its place when its context ends (the client
// completes it, the stream or the connection ends).
func (l *rateLimiter) limitTokenSubscriptions(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	max := l.cfg.Subscriptions
	oc := graphql.GetOperationContext(ctx)
	a, err := capstan.ActorFrom(ctx)
	if max <= 0 || err != nil || oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
		return next(ctx)
	}
	b := l.of(a)
	if b.subscriptions.Add(1) > int32(max) {
		b.subscriptions.Add(-1)
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{rateLimited(fmt.Sprintf("this token holds %d subscriptions open, its limit", max), 0)}})
	}
	context.AfterFunc(ctx, func() { b.subscriptions.Add(-1) })
	return next(ctx)
}

// limitRate refuses a request over its actor's request rate with 429.
func (l *rateLimiter) limitRate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, _ := capstan.ActorFrom(r.Context())
		if wait, ok := l.allowRequest(a); !ok {
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
			writeError(w, http.StatusTooManyRequests, capstan.ERATELIMITED, fmt.Sprintf("too many requests for this token; retry in %s", wait.Round(time.Millisecond)))
			return
		}
		next.ServeHTTP(w, r)
	})
}
