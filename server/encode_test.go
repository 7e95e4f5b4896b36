package server

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, id := range []string{"", "1", "sub-42", "a b", `q"uote`, `back\\slash`, "tab\t", "<tag>&", "ünïcode", "\u2028"} {
		want, err := json.Marshal(id)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendJSONString(nil, id)), "%q", id)
	}
}
