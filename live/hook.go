package live

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Hook connects a subscription's stream to the transport that delivers
// it, so an idle subscription needs no goroutine waiting on its channel:
// the stream calls Ready after every value it sends and once after it
// closes, and the transport reads exactly one result per call. A stream
// also records here the errors it ends with.
type Hook struct {
	ready    func()
	attached atomic.Bool
	mu       sync.Mutex
	errs     gqlerror.List
	relay    Relay
	stop     func() // what runs when the subscriber leaves (AfterStop)
	stopped  bool
}

// Relay is a stream whose transport takes each value before the GraphQL
// executor does, so that a value many subscribers share (Shared) is
// encoded once per selection rather than once per subscriber: the
// transport takes the value, and passes it on to the executor only when
// no other subscriber with the same selection has encoded it yet. Take
// and Pass are called by one goroutine at a time, once per ready signal.
type Relay interface {
	// Take removes the next value the stream signalled; ok is false when
	// the stream ended, and the executor then reads its end.
	Take() (v *Shared, ok bool)
	// Pass hands the value taken last to the executor, to encode.
	Pass()
}

type hookKey struct{}

// WithHook returns ctx carrying a hook that calls ready.
func WithHook(ctx context.Context, ready func()) (context.Context, *Hook) {
	h := &Hook{ready: ready}
	return context.WithValue(ctx, hookKey{}, h), h
}

// Ready returns what a stream created under ctx calls after each value it
// sent and after it closed (a no-op without a hook), and marks the hook
// attached: the transport then waits for those calls.
func Ready(ctx context.Context) func() {
	h, _ := ctx.Value(hookKey{}).(*Hook)
	if h == nil {
		return func() {}
	}
	h.attached.Store(true)
	return h.ready
}

// AfterStop arranges for stop to run once the subscriber of the stream
// under ctx leaves (it completed the subscription, or its connection
// ended): the transport says so through the hook, after cancelling ctx.
// Without a hook, stop runs when ctx ends. Through the hook, an idle
// subscription is spared a context.AfterFunc registration and the
// cancellation bookkeeping it brings (~400 bytes each).
func AfterStop(ctx context.Context, stop func()) {
	h, _ := ctx.Value(hookKey{}).(*Hook)
	if h == nil {
		context.AfterFunc(ctx, stop)
		return
	}
	h.mu.Lock()
	if !h.stopped {
		h.stop = stop
		stop = nil
	}
	h.mu.Unlock()
	if stop != nil { // the subscriber already left
		stop()
	}
}

// Stop tells the stream its subscriber left; the transport calls it after
// cancelling the stream's context.
func (h *Hook) Stop() {
	h.mu.Lock()
	stop := h.stop
	h.stop, h.stopped = nil, true
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Relaying registers the stream under ctx as a relay and reports whether
// a transport will take its values; without a hook it must hand every
// value to the executor itself.
func Relaying(ctx context.Context, r Relay) bool {
	h, _ := ctx.Value(hookKey{}).(*Hook)
	if h == nil {
		return false
	}
	h.mu.Lock()
	h.relay = r
	h.mu.Unlock()
	return true
}

// Relay returns the stream's relay, nil when its values go straight to
// the executor.
func (h *Hook) Relay() Relay {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.relay
}

// Attached reports whether a stream took the hook.
func (h *Hook) Attached() bool { return h.attached.Load() }

// AddError records an error the stream under ctx ends with.
func AddError(ctx context.Context, err *gqlerror.Error) {
	if h, _ := ctx.Value(hookKey{}).(*Hook); h != nil {
		h.mu.Lock()
		h.errs = append(h.errs, err)
		h.mu.Unlock()
	}
}

// Errors returns the errors the stream ended with.
func (h *Hook) Errors() gqlerror.List {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append(gqlerror.List(nil), h.errs...)
}
