package executor

import (
	"context"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// The loop is its operation's one writer. A person's change — a gate
// decision, an intervention, a retry, a cancel, a patch's decision or
// withdrawal — reaches it as a command the service recorded
// (capstan.Command): on its next read the loop decides each pending one,
// oldest first, through the service's rules (Hooks.DecideCommand) on the
// state as stored, and commits the command's effect with its outcome,
// under its fence. The service's mutation waits for that outcome.

// maxCommandTries bounds how often a command whose decision failed for a
// reason that may pass (the store unavailable) is tried again before it
// is rejected with that reason: a command never holds its operation up
// for good.
const maxCommandTries = 3

// applyCommands decides and commits the pending commands read with st,
// after the results the loop recorded so far (the commands are decided
// on the state as stored). The cached state is read again after.
func (l *loop) applyCommands(ctx context.Context, st *state) error {
	if l.pending != nil {
		if err := l.commit(ctx, l.change(st.op)); err != nil {
			return err
		}
	}
	l.dirty = true
	for _, c := range st.commands {
		if err := l.applyCommand(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// lastCommands decides, once the operation ended, the commands recorded
// since the loop last read (a proposal or a recheck its own assists
// sent, a person's that came in late): each once, a failure logged. One
// recorded after this read stays pending (its mutation answers PENDING).
func (l *loop) lastCommands(ctx context.Context) {
	recs, err := l.e.cfg.Store.OperationRecords(ctx, l.org, l.opID, capstan.RecordCommand)
	if err != nil {
		l.e.cfg.Log.Warn("the ended operation's last commands were not read", "operation", l.opID, "err", err.Error())
		return
	}
	for _, c := range recs.PendingCommands() {
		if err := ApplyCommand(ctx, l.e.cfg.Hooks, l.e.cfg.Store, l.org, l.opID, c, *l.now(), l.fence, false); err != nil {
			l.e.cfg.Log.Warn("a command to the ended operation failed", "operation", l.opID, "command", c.ID, "err", err.Error())
		}
	}
}

// applyCommand decides one command and commits its outcome; a decision
// that failed for a reason that may pass is tried again at the loop's
// next step, up to maxCommandTries.
func (l *loop) applyCommand(ctx context.Context, c capstan.Command) error {
	retry := l.commandTries[c.ID] < maxCommandTries-1
	err := ApplyCommand(ctx, l.e.cfg.Hooks, l.e.cfg.Store, l.org, l.opID, c, *l.now(), l.fence, retry)
	if err != nil {
		l.e.cfg.Log.Warn("a command was not applied", "operation", l.opID, "command", c.ID, "kind", string(c.Kind), "retried", retry && passing(err), "err", err.Error())
	}
	if err != nil && retry && passing(err) {
		l.commandTries[c.ID]++
		return err
	}
	delete(l.commandTries, c.ID)
	return err
}

// ApplyCommand decides command c of an operation through hooks and
// commits its effect with its outcome to store, under fence (nil: none).
// A decision that failed for a reason that may pass is returned when
// retry is set (the command stays pending); otherwise it rejects the
// command, like any refusal, with a command.rejected event.
func ApplyCommand(ctx context.Context, hooks Hooks, store capstan.Store, org, opID string, c capstan.Command, now time.Time, fence *capstan.Fence, retry bool) error {
	var ch *capstan.OperationChange
	var made string
	var err error = capstan.Errorf(capstan.EUNAVAILABLE, "this executor takes no commands (it has no service)")
	if hooks != nil {
		ch, made, err = hooks.DecideCommand(ctx, org, opID, c)
	}
	switch {
	case err == nil:
		c.Apply(made, now)
	case capstan.IsFenced(err) || (retry && passing(err)):
		return err
	default:
		c.Reject(err, now)
	}
	err = commitOutcome(ctx, store, org, opID, ch, c, fence)
	if err == nil || capstan.IsFenced(err) || (retry && passing(err)) || c.Status == capstan.CommandRejected && ch == nil {
		return err
	}
	// Its change cannot be committed (the store refused what the rules
	// made): the command is refused with why, alone, so that it never
	// holds its operation up.
	c.Reject(err, now)
	return commitOutcome(ctx, store, org, opID, nil, c, fence)
}

// commitOutcome commits a decided command's change (nil: none) with its
// outcome, and a command.rejected event when it was refused.
func commitOutcome(ctx context.Context, store capstan.Store, org, opID string, ch *capstan.OperationChange, c capstan.Command, fence *capstan.Fence) error {
	if ch == nil {
		op, err := store.GetOperation(ctx, org, opID)
		if err != nil {
			return err
		}
		ch = &capstan.OperationChange{Operation: op}
	}
	if c.Status == capstan.CommandRejected {
		ch.Events = append(ch.Events, event.Record(c.Actor.ID, event.CommandRejected{Command: c.ID, What: string(c.Kind), Code: c.Code, Reason: c.Error}))
	}
	ch.Commands = append(ch.Commands, c)
	ch.Fence = fence
	return store.ApplyOperationChange(ctx, org, ch)
}

// passing reports whether a decision failed for a reason that may pass:
// the store unavailable, an internal failure, a concurrent write.
func passing(err error) bool {
	code := capstan.ErrorCode(err)
	return code == capstan.EUNAVAILABLE || code == capstan.EINTERNAL || capstan.IsStale(err)
}
