package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
)

func TestResponsesAreCapped(t *testing.T) {
	capped := capResponses(16)
	small := capped(context.Background(), func(context.Context) *graphql.Response {
		return &graphql.Response{Data: json.RawMessage(`{"a":1}`)}
	})
	require.JSONEq(t, `{"a":1}`, string(small.Data))
	big := capped(context.Background(), func(context.Context) *graphql.Response {
		return &graphql.Response{Data: json.RawMessage(`{"a":"0123456789abcdef"}`)}
	})
	require.Nil(t, big.Data)
	require.Len(t, big.Errors, 1)
	require.Equal(t, ReasonResponseTooLarge, big.Errors[0].Extensions["code"])
	require.Nil(t, capped(context.Background(), func(context.Context) *graphql.Response { return nil }), "the end of a stream stays the end")
}
