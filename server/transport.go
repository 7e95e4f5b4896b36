package server

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capstan-dev/capstan"
)

// queriesOnlyGET is gqlgen's GET transport, except that a mutation or a
// subscription over GET is 405 Method Not Allowed (GraphQL over HTTP)
// with Allow: POST, where gqlgen answers 406.
type queriesOnlyGET struct{ transport.GET }

func (t queriesOnlyGET) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	t.GET.Do(&methodNotAllowed{ResponseWriter: w}, r, exec)
}

type methodNotAllowed struct {
	http.ResponseWriter
	refused bool
}

func (m *methodNotAllowed) WriteHeader(status int) {
	if status == http.StatusNotAcceptable {
		m.refused = true
		m.Header().Set("Allow", "POST")
		writeError(m.ResponseWriter, http.StatusMethodNotAllowed, capstan.EINVALID, "GET requests may only run queries; send mutations with POST")
		return
	}
	m.ResponseWriter.WriteHeader(status)
}

func (m *methodNotAllowed) Write(p []byte) (int, error) {
	if m.refused { // gqlgen's own message for the 406
		return len(p), nil
	}
	return m.ResponseWriter.Write(p)
}

func (m *methodNotAllowed) Unwrap() http.ResponseWriter { return m.ResponseWriter }

// capResponses replaces a response whose data exceeds limit bytes with
// an error: the client asked for too much at once.
func capResponses(limit int) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		if resp == nil || len(resp.Data) <= limit {
			return resp
		}
		err := limitError(ReasonResponseTooLarge, "the response has %d bytes of data, more than the limit of %d: select less, or page with a lower `first`", len(resp.Data), limit)
		return &graphql.Response{Errors: gqlerror.List{err}, Extensions: resp.Extensions}
	}
}

// plainPOST marks a request that came through plainPost: a subscription
// there would hold the connection until its first event and end after it.
type plainPOSTKey struct{}

// plainPost is gqlgen's POST transport for queries and mutations; a
// subscription over it is refused (refusePostSubscriptions): subscriptions
// are served over graphql-ws or SSE.
type plainPost struct{ transport.POST }

func (t plainPost) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	t.POST.Do(w, r.WithContext(context.WithValue(r.Context(), plainPOSTKey{}, true)), exec)
}

// refusePostSubscriptions answers a subscription sent as a plain POST
// with INVALID instead of holding the request open.
func refusePostSubscriptions(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if plain, _ := ctx.Value(plainPOSTKey{}).(bool); plain && oc.Operation != nil && oc.Operation.Operation == ast.Subscription {
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{Message: "subscriptions are served over WebSocket (graphql-transport-ws) or Server-Sent Events (Accept: text/event-stream), not a plain POST",
			Extensions: map[string]any{"code": capstan.EINVALID}}}})
	}
	return next(ctx)
}

// unsupported is the last transport: a request none of the others takes
// (another content type, another method) gets a typed error, not gqlgen's
// untyped "transport not supported".
type unsupported struct{}

func (unsupported) Supports(*http.Request) bool { return true }

func (unsupported) Do(w http.ResponseWriter, r *http.Request, _ graphql.GraphExecutor) {
	if r.Method == http.MethodPost {
		writeError(w, http.StatusUnsupportedMediaType, capstan.EINVALID, "send GraphQL as application/json (or graphql-ws, or SSE with Accept: text/event-stream)")
		return
	}
	w.Header().Set("Allow", "GET, POST")
	writeError(w, http.StatusMethodNotAllowed, capstan.EINVALID, "GraphQL is served over GET (queries) and POST")
}
