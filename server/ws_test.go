package server

import (
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestEncodeResponseMatchesEncodingJSON holds the hand-written encoding of
// result messages to what encoding/json writes.
func TestEncodeResponseMatchesEncodingJSON(t *testing.T) {
	for _, r := range []*graphql.Response{
		{Data: json.RawMessage(`{"operationEvents":{"cursor":"7","node":{"type":"node.running"}}}`)},
		{Data: nil},
		{Data: json.RawMessage(`null`), Errors: gqlerror.List{{Message: "boom"}}},
		{Data: json.RawMessage(`{}`), Extensions: map[string]any{"x": 1}},
	} {
		for _, id := range []string{"1", `we"ird\id`} {
			got := encodeResponse("next", id, r)
			var gotV, wantV any
			require.NoError(t, json.Unmarshal(got, &gotV), "%s", got)
			require.NoError(t, json.Unmarshal(encode("next", id, r), &wantV))
			require.Equal(t, wantV, gotV)
		}
	}
}
