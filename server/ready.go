package server

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capstan-dev/capstan"
)

// refuseUntilReady answers mutations and subscriptions with UNAVAILABLE
// while the server is not ready: until its executor runs (on Neo4j, once
// it holds the database's executor lease) nothing here would act on a
// change or see the commits live dashboards follow. Queries read the
// store, which is the truth either way.
func refuseUntilReady(ready func() bool) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		if ready == nil || ready() || oc == nil || oc.Operation == nil || oc.Operation.Operation == ast.Query {
			return next(ctx)
		}
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{
			Message:    "Capstan is not ready yet (starting, or waiting for the executor lease); try again shortly",
			Extensions: map[string]any{"code": capstan.EUNAVAILABLE}}}})
	}
}
