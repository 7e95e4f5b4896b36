package cypher_test

import (
	"context"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
)

// TestMigrationsAreNumberedAndRecorded: a database is at the last level
// once a store is ready; one recorded at level 0 (from before levels)
// runs them all again, idempotently; one from a newer Capstan is
// refused.
func TestMigrationsAreNumberedAndRecorded(t *testing.T) {
	ctx := context.Background()
	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	require.NoError(t, err)
	t.Cleanup(func() { driver.Close(ctx) })
	setLevel := func(level int) {
		_, err := neo4j.ExecuteQuery(ctx, driver, `MERGE (m:CapstanSchema {key: 'capstan'}) SET m.level = $level`, map[string]any{"level": level}, neo4j.EagerResultTransformer)
		require.NoError(t, err)
	}
	last := len(cypher.Migrations())
	t.Cleanup(func() { setLevel(last) })
	for i, m := range cypher.Migrations() {
		require.Equal(t, i+1, m.Level)
		require.NotEmpty(t, m.Does)
	}

	level, err := open(t).SchemaLevel(ctx)
	require.NoError(t, err)
	require.Equal(t, last, level)

	setLevel(0)
	level, err = open(t).SchemaLevel(ctx)
	require.NoError(t, err)
	require.Equal(t, last, level, "every migration ran again")

	setLevel(last + 1)
	_, err = open(t).SchemaLevel(ctx)
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "written by a newer Capstan")
}
