package server

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
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
