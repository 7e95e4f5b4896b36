package gqlws

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, data := range []string{
		`{"type":"next","id":"1","payload":{"data":{"operationEvents":{"cursor":"4"}}}}`,
		`{"type":"next","id":"sub-7","payload":{"data":null}}`,
		`{"type":"next","id":"a\"b","payload":{"data":{}}}`, // an escaped id: decoded in full
		`{"type":"next","id":"1","payload":{"errors":[{"message":"x"}]}}`,
		`{"id":"1","type":"next","payload":{"data":{}}}`, // another order
		`{"type":"complete","id":"1"}`,
		`{"type":"error","id":"2","payload":[{"message":"no","extensions":{"code":"NOT_FOUND"}}]}`,
		`{"type":"ping"}`,
	} {
		var want Message
		require.NoError(t, json.Unmarshal([]byte(data), &want), data)
		got, err := decode([]byte(data))
		require.NoError(t, err, data)
		require.Equal(t, want.Type, got.Type, data)
		require.Equal(t, want.ID, got.ID, data)
		if len(want.Payload) == 0 {
			require.Empty(t, got.Payload, data)
		} else {
			require.JSONEq(t, string(want.Payload), string(got.Payload), data)
		}
	}
}

func TestDecodeRefusesWhatIsNotJSON(t *testing.T) {
	for _, data := range []string{`{"type":"next","id":"1","payload":`, `not json`, `{"type":"next","id":"1","payload":{}`} {
		_, err := decode([]byte(data))
		require.Error(t, err, data)
	}
}
