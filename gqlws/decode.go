package gqlws

import (
	"bytes"
	"encoding/json"
)

// resultPrefix begins every result message Capstan's server writes: it
// writes them in exactly this form (type, id, then the payload).
var resultPrefix = []byte(`{"type":"next","id":"`)

// decode reads one protocol message. A result in the server's own form is
// split without decoding its payload (a dashboard, or the load generator,
// reads thousands per second and decodes the payload anyway: Data
// validates it then); anything else goes through encoding/json.
func decode(data []byte) (Message, error) {
	if m, ok := splitResult(data); ok {
		return m, nil
	}
	var m Message
	err := json.Unmarshal(data, &m)
	return m, err
}

// splitResult splits {"type":"next","id":"ID","payload":PAYLOAD}; false
// when data is not in that form (escapes in the id included).
func splitResult(data []byte) (Message, bool) {
	rest, ok := bytes.CutPrefix(data, resultPrefix)
	if !ok {
		return Message{}, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return Message{}, false
	}
	id := rest[:end]
	payload, ok := bytes.CutPrefix(rest[end+1:], []byte(`,"payload":`))
	if !ok || len(payload) < 3 || payload[0] != '{' || payload[len(payload)-1] != '}' {
		return Message{}, false
	}
	payload = payload[:len(payload)-1] // the message's closing brace
	if payload[len(payload)-1] != '}' {
		return Message{}, false
	}
	return Message{Type: "next", ID: string(id), Payload: json.RawMessage(payload)}, true
}
