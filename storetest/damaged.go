package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// Damage makes the stored record of an operation undecodable, the way
// only a store's own test can (a disk fault, a hand edit, a bug).
type Damage func(t *testing.T, org, operationID string)

// UnreadableOperation checks what a store does with an operation whose
// record it cannot decode: reading it is an INTERNAL error (never a
// panic, never a zero operation), and it is still listed as
// unfinished, next to the others, so the executor's restart resumes every
// other operation and retries this one on its own instead of failing the
// whole start on it.
func UnreadableOperation(t *testing.T, s capstan.Store, damage Damage) {
	org := "damaged-" + capstan.NewID()[12:]
	var ops []*capstan.Operation
	for range 2 {
		op, plan := startedPlanIn(t, s, org, "")
		require.NoError(t, s.StartOperation(ctx, org, op, plan, nil, []capstan.OperationEvent{event("operation.created")}, nil))
		ops = append(ops, op)
	}
	broken, fine := ops[0], ops[1]
	damage(t, org, broken.ID)

	_, err := s.GetOperation(ctx, org, broken.ID)
	require.Equal(t, capstan.EINTERNAL, capstan.ErrorCode(err), "%v", err)
	got, err := s.GetOperation(ctx, org, fine.ID)
	require.NoError(t, err)
	require.Equal(t, fine.ID, got.ID)

	unfinished, err := s.UnfinishedOperations(ctx)
	require.NoError(t, err, "one damaged record does not fail the listing")
	require.True(t, containsOp(unfinished, org, broken.ID))
	require.True(t, containsOp(unfinished, org, fine.ID))
}
