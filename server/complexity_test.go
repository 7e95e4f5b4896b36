package server

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/graph"
)

func TestComplexityLimitRefusesOperationsAboveIt(t *testing.T) {
	limit := &complexityLimit{limit: 3}
	require.NoError(t, limit.Validate(graph.NewExecutableSchema(graph.Config{})))
	small := operationContext(t, `{ a: __typename b: __typename }`, nil)
	require.Nil(t, limit.MutateOperationContext(context.Background(), small))
	require.Nil(t, small.Stats.GetExtension("ComplexityLimit"), "nothing kept with the operation")

	big := operationContext(t, `{ a: __typename b: __typename c: __typename d: __typename }`, nil)
	err := limit.MutateOperationContext(context.Background(), big)
	require.NotNil(t, err)
	require.Equal(t, "operation has complexity 4, which exceeds the limit of 3", err.Message)
	require.Equal(t, "COMPLEXITY_LIMIT_EXCEEDED", err.Extensions["code"])
}
