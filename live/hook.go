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
