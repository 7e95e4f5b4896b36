package executor

import (
	"context"
	"slices"

	"github.com/capstan-dev/capstan"
)

// begin moves a pending operation to running. Its resource is moved into
// its changing lifecycle first (an idempotent write, so a restart between
// the two repeats it harmlessly); a resource that cannot change (another
// operation changes it, it does not exist) fails the operation at once.
func (l *loop) begin(ctx context.Context, st *state) error {
	op := st.op
	ch := l.change(op)
	var reason string
	if h := l.e.cfg.Hooks; h != nil && op.ResourceKey != "" {
		if err := h.BeginChange(ctx, l.org, op); err != nil {
			if !permanent(err) {
				return err
			}
			reason = "resource " + op.ResourceKey + ": " + capstan.ErrorMessage(err)
		} else {
			ch.Events = append(ch.Events, l.event("resource.changing", map[string]any{"resource": op.ResourceKey}))
		}
	}
	_ = op.Move(capstan.OperationRunning)
	op.StartedAt = l.now()
	ch.Events = append(ch.Events, l.event("operation.running", nil))
	if reason != "" {
		_ = op.Move(capstan.OperationFailed)
		op.CompletedAt = l.now()
		ch.Events = append(ch.Events, l.event("operation.failed", map[string]any{"reason": reason}))
	}
	return l.commit(ctx, ch)
}

// permanent reports whether an error will not go away by trying again.
func permanent(err error) bool {
	switch capstan.ErrorCode(err) {
	case capstan.EINVALID, capstan.ENOTFOUND, capstan.ECONFLICT, capstan.EFORBIDDEN:
		return true
	}
	return false
}

// concludeResource runs before a change that ends the operation commits:
// the resource takes its final lifecycle first, and the change carries the
// event. Repeated after a restart, the hook changes nothing.
func (l *loop) concludeResource(ctx context.Context, ch *capstan.OperationChange) error {
	op, h := ch.Operation, l.e.cfg.Hooks
	if h == nil || op.ResourceKey == "" || !op.Status.Terminal() ||
		!slices.ContainsFunc(ch.Events, func(e capstan.OperationEvent) bool { return e.Type == "operation."+string(op.Status) }) {
		return nil
	}
	if err := h.EndChange(ctx, l.org, op, op.Status, ch.Evidence); err != nil {
		return err
	}
	ch.Events = append(ch.Events, l.event("resource.concluded", map[string]any{"resource": op.ResourceKey, "outcome": string(op.Status)}))
	return nil
}
