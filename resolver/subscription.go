package resolver

import (
	"context"
	"errors"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capstan-dev/capstan"
	ev "github.com/capstan-dev/capstan/event"
	"github.com/capstan-dev/capstan/graph/model"
	"github.com/capstan-dev/capstan/internal/guard"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/service"
)

// DefaultProgressWindow coalesces progress updates: at most one message
// per subscription per window.
const DefaultProgressWindow = 250 * time.Millisecond

// CodeOverflow is the extensions.code of a subscription ended because its
// client fell behind; extensions.cursor says where to resume.
const CodeOverflow = "OVERFLOW"

func (r *Resolver) broker() (*live.Broker, error) {
	if r.Broker == nil {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "live subscriptions are not served by this server")
	}
	return r.Broker, nil
}

// eventSource reads one operation's timeline for live.Follow.
type eventSource struct {
	svc *service.Service
	id  string
}

func (s eventSource) Events(ctx context.Context, after int64, limit int) ([]capstan.OperationEvent, error) {
	return s.svc.Timeline(ctx, s.id, after, limit)
}

func (s eventSource) Terminal(ctx context.Context) (bool, error) {
	op, err := s.svc.Operation(ctx, s.id)
	if err != nil {
		return false, err
	}
	return op.Status.Terminal(), nil
}

// liveOperation decodes a subscription's operation and checks the caller
// may see it (its organization only).
func (r *Resolver) liveOperation(ctx context.Context, operation string) (*live.Broker, *capstan.Operation, error) {
	b, err := r.broker()
	if err != nil {
		return nil, nil, err
	}
	id, err := localID(operation, kindOperation)
	if err != nil {
		return nil, nil, err
	}
	// A store that is busy (every connection taken by a burst of
	// subscriptions) is waited for, as the feed's own reads are: a
	// subscription does not end UNAVAILABLE for a pool that frees up.
	var op *capstan.Operation
	err = live.RetryUnavailable(ctx, func(ctx context.Context) (err error) {
		op, err = r.Service.Operation(ctx, id)
		return err
	})
	return b, op, err
}

func (r *Resolver) operationEvents(ctx context.Context, operation string, after *string) (<-chan *model.OperationEventEdge, error) {
	b, op, err := r.liveOperation(ctx, operation)
	if err != nil {
		return nil, err
	}
	seq, err := timelineCursor(deref(after))
	if err != nil {
		return nil, err
	}
	out := newEdgeStream(ctx)
	live.StartFeed(ctx, b, op.OrganizationID, op.ID, eventSource{r.Service, op.ID}, seq, out)
	return out.exec, nil
}

// send delivers v on c and tells the transport (live.Hook).
func send[T any](ctx context.Context, c chan<- T, v T, ready func()) error {
	select {
	case c <- v:
		ready()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// streamError ends a stream with its error, unless the client left.
func streamError(ctx context.Context, err error) {
	if ctx.Err() != nil {
		// The client left, or the server ended the connection: a revoked
		// token says so before the socket closes.
		if cause := context.Cause(ctx); capstan.ErrorCode(cause) == capstan.EUNAUTHENTICATED {
			live.AddError(ctx, &gqlerror.Error{Message: capstan.ErrorMessage(cause), Extensions: map[string]any{"code": capstan.EUNAUTHENTICATED}})
		}
		return
	}
	if err == nil {
		return
	}
	var over *live.OverflowError
	if errors.As(err, &over) {
		live.AddError(ctx, &gqlerror.Error{Message: over.Error(),
			Extensions: map[string]any{"code": CodeOverflow, "cursor": eventCursor(over.Cursor)}})
		return
	}
	code := capstan.ErrorCode(err)
	if code == "" {
		code = capstan.EINTERNAL
	}
	live.AddError(ctx, &gqlerror.Error{Message: capstan.ErrorMessage(err), Extensions: map[string]any{"code": code}})
}

func (r *Resolver) operationProgress(ctx context.Context, operation string) (<-chan *service.Progress, error) {
	b, op, err := r.liveOperation(ctx, operation)
	if err != nil {
		return nil, err
	}
	sub := b.Operation(op.OrganizationID, op.ID)
	out := make(chan *service.Progress, 1)
	ready := live.Ready(ctx)
	go func() {
		defer func() { close(out); ready() }()
		defer func() { sub.Close() }()
		defer guard.Recover(r.Log, "operationProgress", func(err error) { streamError(ctx, err) })
		streamError(ctx, r.followProgress(ctx, op.ID, &sub, out, ready))
	}()
	return out, nil
}

// followProgress sends the progress now, then after changes, at most once
// per window; it ends after the operation's final state. Progress is a
// snapshot, so a subscription that overflows just subscribes again.
func (r *Resolver) followProgress(ctx context.Context, id string, sub **live.Subscription, out chan<- *service.Progress, ready func()) error {
	window := r.ProgressWindow
	if window <= 0 {
		window = DefaultProgressWindow
	}
	var seq int64
	send := func() (bool, error) {
		p, err := r.Service.OperationProgress(ctx, id, seq)
		if err != nil {
			return false, err
		}
		return p.Operation.Status.Terminal(), send(ctx, out, p, ready)
	}
	if ended, err := send(); ended || err != nil {
		return err
	}
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m, ok := <-(*sub).C:
			if !ok {
				if !(*sub).Overflowed() {
					return nil // shutting down
				}
				// Fell behind: a snapshot needs no replay, so subscribe
				// again and send the progress as it is now.
				*sub = (*sub).Renew()
				seq = 0
				if due == nil {
					due = time.After(window)
				}
				continue
			}
			for _, e := range m.Events {
				seq = max(seq, e.Sequence)
			}
			if due == nil {
				due = time.After(window)
			}
		case <-due:
			due = nil
			if ended, err := send(); ended || err != nil {
				return err
			}
		}
	}
}

func (r *Resolver) operationsStream(ctx context.Context, filter *model.OperationFilter) (<-chan *capstan.Operation, error) {
	f, err := r.operationFilter(ctx, filter)
	if err != nil {
		return nil, err
	}
	return organizationStream(r, ctx, "operations", func(m *live.Message, emit func(*capstan.Operation) bool) bool {
		if m.OnlyAssessments() || !f.Matches(&m.Operation) {
			return true
		}
		op := m.Operation
		if n := len(m.Events); n > 0 {
			op.SeenAt = m.Events[n-1].Sequence
		}
		return emit(&op)
	})
}

// resourceHealth streams the organization's resources as health
// assessments change their health: the resource as it is now, once per
// resource.assessed event (a dashboard's "needs repair").
func (r *Resolver) resourceHealth(ctx context.Context) (<-chan *capstan.Resource, error) {
	return organizationStream(r, ctx, "resources", func(m *live.Message, emit func(*capstan.Resource) bool) bool {
		for _, e := range m.Events {
			assessed, ok := ev.ResourceOf(e)
			key := assessed.Resource
			if !ok || assessed.What != "assessed" || key == "" {
				continue
			}
			res, err := r.Service.ResourceByKey(ctx, key)
			if err != nil {
				continue // gone meanwhile
			}
			if !emit(res) {
				return false
			}
		}
		return true
	})
}

// organizationStream follows the caller's organization's messages and
// lets each send what it means to the subscriber (emit; false once the
// subscriber left), until the subscriber leaves or falls behind (an
// OVERFLOW error saying to query what and subscribe again).
func organizationStream[T any](r *Resolver, ctx context.Context, what string, handle func(m *live.Message, emit func(T) bool) bool) (<-chan T, error) {
	b, err := r.broker()
	if err != nil {
		return nil, err
	}
	org, err := service.Org(ctx)
	if err != nil {
		return nil, err
	}
	sub := b.Organization(org)
	out := make(chan T, 1)
	ready := live.Ready(ctx)
	emit := func(v T) bool { return send(ctx, out, v, ready) == nil }
	go func() {
		defer func() { close(out); ready() }()
		defer sub.Close()
		defer guard.Recover(r.Log, what, func(err error) { streamError(ctx, err) })
		for {
			select {
			case <-ctx.Done():
				streamError(ctx, nil) // a revoked token says so
				return
			case m, ok := <-sub.C:
				if !ok {
					if sub.Overflowed() {
						live.AddError(ctx, &gqlerror.Error{Message: "the subscriber fell too far behind; query " + what + " and subscribe again",
							Extensions: map[string]any{"code": CodeOverflow}})
					}
					return
				}
				if !handle(m, emit) {
					return
				}
			}
		}
	}()
	return out, nil
}
