package main

import (
	"bytes"
	"strconv"
	"time"
)

// event is what the load test reads of an operationEvents result.
type event struct {
	Sequence int64
	At       time.Time
}

// eventOf reads the sequence and commit time from a result payload,
// {"data":{"operationEvents":{"cursor":"..","node":{"sequence":N,"at":".."}}}},
// by scanning rather than decoding: the generator shares the machine's
// cores with the server it measures, so it should spend as little on each
// message as it can. Anything else (errors) is not an event.
func eventOf(payload []byte) (event, bool) {
	var e event
	if bytes.Contains(payload, []byte(`"errors"`)) {
		return e, false
	}
	seq, ok := after(payload, `"sequence":`, ',', '}')
	if !ok {
		return e, false
	}
	n, err := strconv.ParseInt(string(seq), 10, 64)
	if err != nil {
		return e, false
	}
	at, ok := after(payload, `"at":"`, '"', '"')
	if !ok {
		return e, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(at))
	if err != nil {
		return e, false
	}
	return event{Sequence: n, At: t}, true
}

// after returns the bytes that follow key up to the first of end1 or end2.
func after(b []byte, key string, end1, end2 byte) ([]byte, bool) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return nil, false
	}
	rest := b[i+len(key):]
	for j, c := range rest {
		if c == end1 || c == end2 {
			return rest[:j], true
		}
	}
	return nil, false
}
