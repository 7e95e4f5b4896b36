package embedded_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/embedded"
)

// TestMigrationsRunOnceFromTheRecordedLevel opens a database from before
// levels were recorded: every migration runs (operation versions filled
// in) and the level is the last; a database from a newer Capstan is
// refused, untouched.
func TestMigrationsRunOnceFromTheRecordedLevel(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := embedded.Open(dir)
	require.NoError(t, err)
	level, err := s.SchemaLevel(ctx)
	require.NoError(t, err)
	require.Equal(t, len(embedded.Migrations()), level, "a new store is at the last level")
	for i, m := range embedded.Migrations() {
		require.Equal(t, i+1, m.Level, "levels are numbered 1, 2, 3 …")
		require.NotEmpty(t, m.Name)
		require.NotEmpty(t, m.Does)
	}

	op := startOperation(t, s, capstan.OperationPending, "")
	require.NoError(t, embedded.DropOperationVersions(s))
	require.NoError(t, embedded.SetSchemaLevel(s, 0))
	require.NoError(t, s.Close())

	s, err = embedded.Open(dir)
	require.NoError(t, err)
	level, err = s.SchemaLevel(ctx)
	require.NoError(t, err)
	require.Equal(t, len(embedded.Migrations()), level)
	require.NoError(t, op.Move(capstan.OperationRunning))
	require.NoError(t, s.ApplyOperationChange(ctx, "acme", &capstan.OperationChange{Operation: op,
		Events: []capstan.OperationEvent{{Type: "operation.running", Actor: "executor"}}}), "the migrated operation takes its next step")

	require.NoError(t, embedded.SetSchemaLevel(s, len(embedded.Migrations())+1))
	require.NoError(t, s.Close())
	_, err = embedded.Open(dir)
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "written by a newer Capstan")
}
