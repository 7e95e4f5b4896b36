package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// testCommands: a command recorded for an operation's owner moves no
// version of the operation (a step at the version read before it still
// commits), is listed pending with the operation's records, and is
// decided by the step that carries it; an id is recorded once; a command
// for no operation, or another organization's, is NOT_FOUND; an ended
// operation takes none (CONFLICT).
func testCommands(t *testing.T, s capstan.Store) {
	op, plan := startedPlan(t, s, "")
	require.NoError(t, s.StartOperation(ctx, orgA, op, plan, nil, []capstan.OperationEvent{event("operation.created")}, nil))
	version := op.Version
	c := &capstan.Command{ID: capstan.NewID(), Kind: capstan.CommandDecideGate, Actor: capstan.Actor{ID: "bob", OrganizationID: orgA, Roles: []string{"sre"}},
		At: time.Now().UTC(), Args: capstan.CommandArgs{Node: "approve", Approve: true}, Status: capstan.CommandPending}
	require.NoError(t, s.RecordCommand(ctx, orgA, op.ID, c))
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(s.RecordCommand(ctx, orgA, op.ID, c)), "an id is recorded once")
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(s.RecordCommand(ctx, orgA, "no-such-op", c)))
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(s.RecordCommand(ctx, orgB, op.ID, c)), "commands are scoped to their organization")
	_, err := s.GetCommand(ctx, orgB, op.ID, c.ID)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))

	stored, err := s.GetOperation(ctx, orgA, op.ID)
	require.NoError(t, err)
	require.Equal(t, version, stored.Version, "a command moves no version")
	recs, err := s.OperationRecords(ctx, orgA, op.ID)
	require.NoError(t, err)
	require.Len(t, recs.PendingCommands(), 1)
	require.Equal(t, *c, recs.PendingCommands()[0])

	decided := *c
	decided.Reject(capstan.Errorf(capstan.ECONFLICT, "gate approve is approved"), time.Now().UTC())
	require.NoError(t, s.ApplyOperationChange(ctx, orgA, &capstan.OperationChange{Operation: op, Commands: []capstan.Command{decided},
		Events: []capstan.OperationEvent{event("command.rejected")}}), "the step at the version read before the command commits")
	got, err := s.GetCommand(ctx, orgA, op.ID, c.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.CommandRejected, got.Status)
	require.Equal(t, capstan.ECONFLICT, got.Code)
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(got.Outcome()))
	recs, err = s.OperationRecords(ctx, orgA, op.ID)
	require.NoError(t, err)
	require.Empty(t, recs.PendingCommands())
	require.Len(t, recs.Commands, 1, "decided in place")

	require.NoError(t, op.Move(capstan.OperationCancelled))
	require.NoError(t, s.ApplyOperationChange(ctx, orgA, &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{event("operation.cancelled")}}))
	late := &capstan.Command{ID: capstan.NewID(), Kind: capstan.CommandRetryNode, Actor: c.Actor, At: time.Now().UTC(), Status: capstan.CommandPending}
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(s.RecordCommand(ctx, orgA, op.ID, late)), "an ended operation takes no command: no owner would apply it")
	recs, err = s.OperationRecords(ctx, orgA, op.ID)
	require.NoError(t, err)
	require.Len(t, recs.Commands, 1, "nothing recorded")
}
