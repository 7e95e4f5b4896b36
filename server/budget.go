package server

import (
	"context"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

type budgetKey struct{}

// resolverBudget gives each query and mutation its own count.
func resolverBudget(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if oc := graphql.GetOperationContext(ctx); oc.Operation != nil && oc.Operation.Operation != ast.Subscription {
		ctx = context.WithValue(ctx, budgetKey{}, new(atomic.Int64))
	}
	return next(ctx)
}

// spendResolver counts one resolver call against its operation's budget.
func spendResolver(limit int64) graphql.FieldMiddleware {
	return func(ctx context.Context, next graphql.Resolver) (any, error) {
		if fc := graphql.GetFieldContext(ctx); fc != nil && fc.IsResolver {
			if n, ok := ctx.Value(budgetKey{}).(*atomic.Int64); ok && n.Add(1) > limit {
				return nil, limitError(ReasonResolverLimit, "the query resolved more than %d fields: select less, or page with a lower `first`", limit)
			}
		}
		return next(ctx)
	}
}
