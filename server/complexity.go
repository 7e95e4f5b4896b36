package server

import (
	"context"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// complexityLimit refuses operations whose complexity exceeds limit, as
// gqlgen's extension.FixedComplexityLimit does, without recording the
// figures in the operation's stats: a subscription keeps its operation
// context for as long as it lives, and that record (a map) was ~600 bytes
// of every idle subscription.
type complexityLimit struct {
	limit  int
	schema graphql.ExecutableSchema
}

var (
	_ graphql.HandlerExtension        = (*complexityLimit)(nil)
	_ graphql.OperationContextMutator = (*complexityLimit)(nil)
)

func (c *complexityLimit) ExtensionName() string { return "ComplexityLimit" }

func (c *complexityLimit) Validate(schema graphql.ExecutableSchema) error {
	c.schema = schema
	return nil
}

func (c *complexityLimit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	op := oc.Doc.Operations.ForName(oc.OperationName)
	if n := complexity.Calculate(ctx, c.schema, op, oc.Variables); n > c.limit {
		err := gqlerror.Errorf("operation has complexity %d, which exceeds the limit of %d", n, c.limit)
		errcode.Set(err, "COMPLEXITY_LIMIT_EXCEEDED")
		return err
	}
	return nil
}
