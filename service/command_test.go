package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
)

// TestACommandNoOwnerAppliesIsPending: with no executor to apply it, a
// cancel is recorded and answered PENDING, naming the command (and the
// operation) for the client to follow; nothing of the operation moved.
// Once an owner comes, it applies the command: the operation is
// cancelled, and the command says so. A command on an ended operation is
// refused at once, recorded nowhere.
func TestACommandNoOwnerAppliesIsPending(t *testing.T) {
	svc, store := setup(t)
	ctx := testenv.Admin(testenv.Org)
	op, err := svc.StartOperation(ctx, plan(t, svc, testenv.SeedIntent()).ID, "")
	require.NoError(t, err)
	testenv.Wakes(svc).Listen(nil) // no executor holds the shard
	svc.CommandWait = 50 * time.Millisecond

	_, err = svc.CancelOperation(ctx, op.ID, "changed my mind")
	require.Equal(t, capstan.EPENDING, capstan.ErrorCode(err), "%v", err)
	var ce *capstan.Error
	require.True(t, errors.As(err, &ce))
	id, _ := ce.Extensions["command"].(string)
	require.NotEmpty(t, id)
	require.Equal(t, capstan.OperationGID(op.ID), ce.Extensions["operation"])
	stored, err := store.GetOperation(context.Background(), testenv.Org, op.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.OperationPending, stored.Status, "nothing moved")
	c, err := store.GetCommand(context.Background(), testenv.Org, op.ID, id)
	require.NoError(t, err)
	require.Equal(t, capstan.CommandPending, c.Status)
	require.Equal(t, "alice", c.Actor.ID)

	testenv.NewCommandOwner(svc, store).Notify(testenv.Org, op.ID) // an owner takes the operation
	c, err = store.GetCommand(context.Background(), testenv.Org, op.ID, id)
	require.NoError(t, err)
	require.Equal(t, capstan.CommandApplied, c.Status)
	stored, err = store.GetOperation(context.Background(), testenv.Org, op.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.OperationCancelled, stored.Status)

	_, err = svc.RetryNode(ctx, op.ID, "create-bucket")
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "an ended operation takes no command: %v", err)
	recs, err := store.OperationRecords(context.Background(), testenv.Org, op.ID)
	require.NoError(t, err)
	require.Len(t, recs.Commands, 1, "none recorded")
}

// TestARefusedCommandSaysWhy: a command the owner refuses answers its
// mutation the error it always did, and stays on the record, rejected,
// with a command.rejected event naming it.
func TestARefusedCommandSaysWhy(t *testing.T) {
	svc, store := setup(t)
	ctx := testenv.Admin(testenv.Org)
	op, err := svc.StartOperation(ctx, plan(t, svc, testenv.SeedIntent()).ID, "")
	require.NoError(t, err)
	_, refused := svc.RetryNode(ctx, op.ID, "create-bucket")
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(refused), "%v", refused)
	recs, err := store.OperationRecords(context.Background(), testenv.Org, op.ID)
	require.NoError(t, err)
	require.Len(t, recs.Commands, 1)
	c := recs.Commands[0]
	require.Equal(t, capstan.CommandRejected, c.Status)
	require.Equal(t, capstan.ECONFLICT, c.Code)
	require.Equal(t, capstan.ErrorMessage(refused), c.Error)
	events, err := store.ListEvents(context.Background(), testenv.Org, op.ID, 0, 100)
	require.NoError(t, err)
	last := events[len(events)-1]
	require.Equal(t, "command.rejected", last.Type)
	require.Equal(t, c.ID, last.Payload["command"])
	require.Equal(t, "alice", last.Actor)
}
