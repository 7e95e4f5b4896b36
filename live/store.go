package live

import (
	"context"

	"github.com/capstan-dev/capstan"
)

// Store publishes every committed operation change of the store it wraps
// (to Broker, when set), and wakes this process's executor for an
// operation started or commanded here (Wakes, when set). Both happen after
// the commit returns, so a subscriber never sees what was not durably
// written; the store's timeline stays the source a subscriber replays
// from.
type Store struct {
	capstan.Store
	Broker *Broker
	Wakes  *Wakes
}

// StartOperation starts the operation and publishes its first events.
func (s Store) StartOperation(ctx context.Context, org string, op *capstan.Operation, plan *capstan.Plan, in *capstan.Intent, events []capstan.OperationEvent, fence *capstan.Fence) error {
	if err := s.Store.StartOperation(ctx, org, op, plan, in, events, fence); err != nil {
		return err
	}
	s.publish(Message{Org: org, Operation: *op, Events: append([]capstan.OperationEvent(nil), events...)})
	s.Wakes.wake(org, op.ID, plan)
	return nil
}

// RecordCommand records the command and wakes this process's executor:
// the operation's owner, when it runs here.
func (s Store) RecordCommand(ctx context.Context, org, opID string, c *capstan.Command) error {
	if err := s.Store.RecordCommand(ctx, org, opID, c); err != nil {
		return err
	}
	s.Wakes.wake(org, opID, nil)
	return nil
}

func (s Store) publish(m Message) {
	if s.Broker != nil {
		s.Broker.Publish(m)
	}
}

// ApplyOperationChange commits the change and publishes it.
func (s Store) ApplyOperationChange(ctx context.Context, org string, ch *capstan.OperationChange) error {
	if err := s.Store.ApplyOperationChange(ctx, org, ch); err != nil {
		return err
	}
	s.publish(Message{Org: org, Operation: *ch.Operation, Events: append([]capstan.OperationEvent(nil), ch.Events...)})
	return nil
}
