package service

import (
	"context"
	"time"

	"github.com/capstan-dev/capstan"
)

// An operation has one writer: the executor that holds its shard (its
// owner). A person's change to a running operation — a gate decision, an
// intervention, a retry, a cancel, a patch's decision or withdrawal — is
// recorded as a command (capstan.Command); the owner decides it in its
// next step on the state it holds (DecideCommand) and commits its effect
// with the command's outcome under its fence. The mutation waits for that
// outcome and answers as it always did; past capstan.MaxCommandWait (no
// executor holds the shard now, or one is taking it over) it answers
// PENDING, naming the command, which takes effect when an owner applies
// it.

// Changes wakes a waiter at each change of an operation committed or
// learned here (live.Broker; nil: the service polls the command).
type Changes interface {
	Changed(org, opID string) (<-chan struct{}, func())
}

// submit records a command on an operation that still runs, wakes its
// owner and waits for the owner's decision: nil once applied, the
// rejection otherwise, or PENDING past the wait.
func (s *Service) submit(ctx context.Context, opID string, kind capstan.CommandKind, args capstan.CommandArgs) (*capstan.Command, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	org := a.OrganizationID
	op, err := s.Store.GetOperation(ctx, org, opID)
	if err != nil {
		return nil, err
	}
	if op.Status.Terminal() {
		return nil, capstan.Ended(opID)
	}
	c := &capstan.Command{ID: capstan.NewID(), Kind: kind, Actor: *a, At: s.Now().UTC(), Args: args, Status: capstan.CommandPending}
	var changed <-chan struct{}
	if s.Changes != nil { // before the command is recorded: its outcome cannot come first
		ch, stop := s.Changes.Changed(org, opID)
		defer stop()
		changed = ch
	}
	if err := s.Store.RecordCommand(ctx, org, opID, c); err != nil { // it wakes the owner (live.Store; elsewhere, its tailer)
		return nil, err
	}
	return s.await(ctx, org, opID, c.ID, changed)
}

// send records a command for an operation's owner without waiting for
// it (the executor cancelling a child: its parent follows the child's
// end, not the command's).
func (s *Service) send(ctx context.Context, org, opID, actor string, kind capstan.CommandKind, args capstan.CommandArgs) error {
	c := &capstan.Command{ID: capstan.NewID(), Kind: kind, Actor: capstan.Actor{ID: actor, OrganizationID: org, Roles: []string{capstan.RoleOperator}},
		At: s.Now().UTC(), Args: args, Status: capstan.CommandPending}
	return s.Store.RecordCommand(ctx, org, opID, c)
}

// await waits for the owner's decision on a command: woken by the
// operation's changes, and reading the command at growing intervals in
// case a wake-up was missed (or there is no Changes).
func (s *Service) await(ctx context.Context, org, opID, id string, changed <-chan struct{}) (*capstan.Command, error) {
	wait := s.CommandWait
	if wait <= 0 {
		wait = capstan.MaxCommandWait
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	poll := 2 * time.Millisecond
	for {
		c, err := s.Store.GetCommand(ctx, org, opID, id)
		if err != nil {
			return nil, err
		}
		if c.Decided() {
			return c, c.Outcome()
		}
		tick := time.NewTimer(poll)
		select {
		case <-changed:
		case <-tick.C:
			poll = min(2*poll, 100*time.Millisecond)
		case <-deadline.C:
			tick.Stop()
			return c, pending(c, opID, wait)
		case <-ctx.Done():
			tick.Stop()
			return nil, capstan.Errorf(capstan.EUNAVAILABLE, "the request ended before the operation's owner applied command %s: it is recorded, and takes effect when the owner applies it", id)
		}
		tick.Stop()
	}
}

// pending is the answer of a command the owner has not applied yet.
func pending(c *capstan.Command, opID string, wait time.Duration) error {
	return &capstan.Error{Code: capstan.EPENDING, Extensions: map[string]any{"command": c.ID, "operation": capstan.OperationGID(opID)},
		Message: "recorded as command " + c.ID + ", which no executor has applied within " + wait.String() +
			" (none holds the operation's shard now, or one is taking it over): it takes effect when one does; the operation's commands and timeline show its outcome"}
}

// DecideCommand decides a command on its operation as stored now, for
// the operation's owner to commit: the change that applies it (nil for
// none), what it made (a patch's id), and why it is refused. A refusal
// may come with a change all the same (a patch found stale), which the
// owner commits with it.
func (s *Service) DecideCommand(ctx context.Context, org, opID string, c capstan.Command) (*capstan.OperationChange, string, error) {
	actor := c.Actor
	actor.OrganizationID = org
	ctx = capstan.WithActor(ctx, &actor)
	a := c.Args
	switch c.Kind {
	case capstan.CommandDecideGate:
		ch, err := s.decideGate(ctx, opID, a.Node, a.Approve, a.Comment)
		return ch, "", err
	case capstan.CommandIntervene:
		ch, err := s.recordIntervention(ctx, opID, a.Node, a.Type, a.Note)
		return ch, "", err
	case capstan.CommandRetryNode:
		ch, err := s.retryNode(ctx, opID, a.Node)
		return ch, "", err
	case capstan.CommandCancel:
		ch, err := s.cancel(ctx, org, c.Actor.ID, opID, a.Reason)
		return ch, "", err
	case capstan.CommandDecidePatch:
		ch, err := s.decide(ctx, &actor, a.Patch, a.Approve, a.Comment, a.Digest)
		return ch, a.Patch, err
	case capstan.CommandWithdrawPatch:
		ch, err := s.withdraw(ctx, &actor, a.Patch, a.Reason)
		return ch, a.Patch, err
	case capstan.CommandProposePatch:
		if a.Proposal == nil {
			return nil, "", capstan.Errorf(capstan.EINVALID, "a patch.propose command without its proposal")
		}
		return s.decideProposal(ctx, org, proposalOf(opID, a.Proposal))
	case capstan.CommandRecheckPatches:
		ch, err := s.recheckPatches(ctx, org, opID)
		return ch, "", err
	case capstan.CommandAnalysisFailed:
		ch, err := s.analysisFailed(ctx, org, opID, c.Actor.ID, a.Node, a.Problems)
		return ch, "", err
	case capstan.CommandRevealed:
		ch, err := s.revealed(ctx, org, opID, c.Actor.ID, a.Revealed)
		return ch, "", err
	}
	return nil, "", capstan.Errorf(capstan.EINVALID, "no command %q", c.Kind)
}
