package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestEventOfReadsWhatDecodingReads(t *testing.T) {
	at := time.Date(2026, 12, 3, 7, 0, 0, 123456789, time.UTC)
	for _, payload := range []string{
		`{"data":{"operationEvents":{"cursor":"42","node":{"sequence":42,"at":"` + at.Format(time.RFC3339Nano) + `"}}}}`,
		`{"data":{"operationEvents":{"node":{"at":"` + at.Format(time.RFC3339Nano) + `","sequence":42},"cursor":"42"}}}`,
	} {
		var want struct {
			Data struct{ OperationEvents struct{ Node event } }
		}
		require.NoError(t, json.Unmarshal([]byte(payload), &want))
		got, ok := eventOf([]byte(payload))
		require.True(t, ok, payload)
		require.Equal(t, want.Data.OperationEvents.Node.Sequence, got.Sequence)
		require.True(t, want.Data.OperationEvents.Node.At.Equal(got.At))
	}
	for _, bad := range []string{
		`{"errors":[{"message":"OVERFLOW"}]}`,
		`{"data":{"operationEvents":{"node":{"sequence":"x","at":"2026-12-03T07:00:00Z"}}}}`,
		`{"data":{"operationEvents":{"node":{"sequence":1,"at":"yesterday"}}}}`,
		`{"data":null}`,
	} {
		_, ok := eventOf([]byte(bad))
		require.False(t, ok, bad)
	}
}
