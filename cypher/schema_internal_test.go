package cypher

import (
	"errors"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"
)

func TestASchemaRuleMadeElsewhereCountsAsMade(t *testing.T) {
	for _, c := range []struct {
		code string
		want bool
	}{
		{"Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists", true},
		{"Neo.ClientError.Schema.IndexWithNameAlreadyExists", true},
		{"Neo.ClientError.Schema.ConstraintWithNameAlreadyExists", true},
		{"Neo.ClientError.Schema.IndexAlreadyExists", true},
		{"Neo.ClientError.Schema.ConstraintAlreadyExists", true},
		{"Neo.ClientError.Schema.ConstraintValidationFailed", false},
		{"Neo.TransientError.Transaction.DeadlockDetected", false},
	} {
		t.Run(c.code, func(t *testing.T) {
			require.Equal(t, c.want, madeElsewhere(&neo4j.Neo4jError{Code: c.code}))
		})
	}
	require.False(t, madeElsewhere(errors.New("connection refused")))
}

// TestIndexesStillBuildingAreNotAFailure: db.awaitIndexes running out of
// time (a cold database on a loaded machine) is a procedure's failure,
// which the schema reports as UNAVAILABLE (the server waits and tries
// again), not as a broken schema.
func TestIndexesStillBuildingAreNotAFailure(t *testing.T) {
	require.True(t, isProcedureFailure(&neo4j.Neo4jError{Code: "Neo.ClientError.Procedure.ProcedureCallFailed", Msg: "Expected all indexes to come online within a reasonable time"}))
	require.False(t, isProcedureFailure(&neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed"}))
	require.False(t, isProcedureFailure(errors.New("connection refused")))
}
