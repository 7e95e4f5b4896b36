package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/99designs/gqlgen/graphql"
)

// The decoders of client WebSocket messages: pure functions, fuzzed by
// FuzzWebSocketMessage.

// decodeClientMessage decodes one message's envelope; a message without
// a type is not one.
func decodeClientMessage(data []byte) (wsMessage, error) {
	var m wsMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return m, err
	}
	if m.Type == "" {
		return m, errors.New("message has no type")
	}
	return m, nil
}

// decodeInit returns the bearer token of a connection_init payload (""
// when it has none).
func decodeInit(payload json.RawMessage) (string, error) {
	var p map[string]any
	if len(payload) > 0 && json.Unmarshal(payload, &p) != nil {
		return "", errors.New("connection_init payload is not a JSON object")
	}
	return bearer(p), nil
}

// bearer finds the token among a connection_init payload's keys:
// Authorization (with or without "Bearer "), else authToken, else token,
// case-insensitively; the first in that order wins, whatever the order
// of the keys.
func bearer(p map[string]any) string {
	found := map[string]string{}
	for k, v := range p {
		if s, ok := v.(string); ok {
			k = strings.ToLower(k)
			if prev, dup := found[k]; !dup || s < prev { // two spellings of one key: the same pick every time
				found[k] = s
			}
		}
	}
	for _, k := range []string{"authorization", "authtoken", "token"} {
		if s, ok := found[k]; ok {
			if t, cut := bearerToken(s); cut {
				return strings.TrimSpace(t)
			}
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// decodeSubscribe decodes a subscribe (or legacy start) payload as a
// GraphQL request, numbers kept exact.
func decodeSubscribe(payload json.RawMessage) (*graphql.RawParams, error) {
	var params graphql.RawParams
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&params); err != nil {
		return nil, err
	}
	return &params, nil
}
