package server

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	_ "github.com/vektah/gqlparser/v2/validator/rules" // the standard rules

	"github.com/capstan-dev/capstan/graph"
)

var fuzzSchema = graph.NewExecutableSchema(graph.Config{}).Schema()

var limitReasons = []string{ReasonQueryTooLarge, ReasonTokenLimit, ReasonDepthLimit, ReasonAliasLimit,
	ReasonRootFieldLimit, ReasonFieldLimit, ReasonRepeatLimit, ReasonIntrospectionOff}

// checkRequest runs what the server runs on a request's query before
// executing it: the shape limits, parsing, validation, variable coercion
// and the cost. It must never panic, and the shape check must give the
// same answer twice.
func checkRequest(t *testing.T, params *graphql.RawParams) {
	err := checkShape(params.Query, DefaultLimits, false)
	if again := checkShape(params.Query, DefaultLimits, false); (err == nil) != (again == nil) || (err != nil && err.Message != again.Message) {
		t.Fatalf("the shape check answered %v, then %v", err, again)
	}
	if err != nil {
		if !slices.Contains(limitReasons, err.Extensions["code"].(string)) {
			t.Fatalf("unknown reason %v", err.Extensions)
		}
		return
	}
	doc, perr := parser.ParseQuery(&ast.Source{Input: params.Query})
	if perr != nil {
		return
	}
	if errs := validator.Validate(fuzzSchema, doc); len(errs) > 0 {
		return
	}
	for _, op := range doc.Operations {
		vars, err := validator.VariableValues(fuzzSchema, op, params.Variables)
		if err != nil {
			continue
		}
		if c := OperationCost(op, vars); c < 0 || c > math.MaxInt32 {
			t.Fatalf("cost %d out of range", c)
		}
	}
}

func FuzzGraphQLRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var params graphql.RawParams // as gqlgen's POST transport decodes it
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&params) != nil {
			return
		}
		checkRequest(t, &params)
	})
}

func FuzzWebSocketMessage(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeClientMessage(data)
		if err != nil {
			return
		}
		back, err := decodeClientMessage(encode(m.Type, m.ID, m.Payload))
		if err != nil || back.Type != m.Type || back.ID != m.ID {
			t.Fatalf("%q does not survive encoding: %v %+v", data, err, back)
		}
		switch m.Type {
		case "connection_init":
			token, err := decodeInit(m.Payload)
			if err != nil {
				return
			}
			for range 3 { // map order must not change the pick
				if again, _ := decodeInit(m.Payload); again != token {
					t.Fatalf("token %q, then %q", token, again)
				}
			}
		case "subscribe", "start":
			params, err := decodeSubscribe(m.Payload)
			if err != nil {
				return
			}
			checkRequest(t, params)
		}
	})
}
