package cypher_test

import (
	"context"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/secret"
)

// TestSecretsInTheDatabase: the replicas' secret store on real Neo4j:
// sealed values only (the database never holds a value), the current
// value and the replaced ones, a generation that moves with each put,
// organizations apart.
func TestSecretsInTheDatabase(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	k := make([]byte, secret.KeySize)
	db := secret.NewDB(s, k)
	org, other := "sec-"+capstan.NewID()[12:], "sec-"+capstan.NewID()[12:]
	t.Cleanup(func() { // sealed with a key of this test's: servers on this database must not find them
		d := driverFor(t)
		_, err := neo4j.ExecuteQuery(ctx, d, `MATCH (s) WHERE (s:Secret OR s:SecretGeneration) AND s.org IN $orgs DETACH DELETE s`, map[string]any{"orgs": []string{org, other}}, neo4j.EagerResultTransformer)
		require.NoError(t, err)
	})
	gen0, err := db.Generation(ctx, org)
	require.NoError(t, err)
	require.NoError(t, db.Put(ctx, org, "db-password", []byte("first-value-123")))
	require.NoError(t, db.Put(ctx, org, "db-password", []byte("second-value-456")))
	require.NoError(t, db.Put(ctx, other, "db-password", []byte("other-org-value")))
	gen, err := db.Generation(ctx, org)
	require.NoError(t, err)
	require.Equal(t, gen0+2, gen)

	v, err := db.Get(ctx, org, "db-password")
	require.NoError(t, err)
	require.Equal(t, "second-value-456", string(v))
	values, err := db.Values(ctx, org)
	require.NoError(t, err)
	require.ElementsMatch(t, [][]byte{[]byte("second-value-456"), []byte("first-value-123")}, values)
	list, err := db.List(ctx, org)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "db-password", list[0].Name)

	rec, err := s.SecretRecord(ctx, org, "db-password")
	require.NoError(t, err)
	require.Len(t, rec, 2)
	require.NotContains(t, string(rec[0].Ciphertext), "second-value", "sealed")
}

func driverFor(t *testing.T) neo4j.DriverWithContext {
	d, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	require.NoError(t, err)
	t.Cleanup(func() { d.Close(context.Background()) })
	return d
}
