package live

import (
	"context"

	"github.com/capstan-dev/capstan"
)

// Store publishes every committed operation change of the store it wraps.
// Publishing happens after the commit returns, so a subscriber never sees
// what was not durably written; the store's timeline stays the source a
// subscriber replays from.
type Store struct {
	capstan.Store
	Broker *Broker
}

// StartOperation starts the operation and publishes its first events.
func (s Store) StartOperation(ctx context.Context, org string, op *capstan.Operation, plan *capstan.Plan, in *capstan.Intent, events []capstan.OperationEvent, fence *capstan.Fence) error {
	if err := s.Store.StartOperation(ctx, org, op, plan, in, events, fence); err != nil {
		return err
	}
	s.Broker.Publish(Message{Org: org, Operation: *op, Events: append([]capstan.OperationEvent(nil), events...)})
	return nil
}

// ApplyOperationChange commits the change and publishes it.
func (s Store) ApplyOperationChange(ctx context.Context, org string, ch *capstan.OperationChange) error {
	if err := s.Store.ApplyOperationChange(ctx, org, ch); err != nil {
		return err
	}
	s.Broker.Publish(Message{Org: org, Operation: *ch.Operation, Events: append([]capstan.OperationEvent(nil), ch.Events...)})
	return nil
}
