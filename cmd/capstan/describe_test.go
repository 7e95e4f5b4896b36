package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDescribeEvents(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 10, 4, 5, 0, time.UTC)
	cases := []struct {
		typ     string
		payload map[string]any
		want    string
	}{
		{"node.running", map[string]any{"node": "helm-install", "attempt": 2}, "   7 10:04:05 ▶ helm-install (attempt 2)"},
		{"node.failed", map[string]any{"node": "n", "reason": "exit 1"}, "   7 10:04:05 ✖ n: exit 1"},
		{"gate.waiting", map[string]any{"node": "g", "roles": []any{"sre"}}, "   7 10:04:05 ⏸ gate g waits for approval by [sre]"},
		{"evidence.recorded", map[string]any{"node": "n", "item": "pods-ready", "result": "passed"}, "   7 10:04:05   evidence n/pods-ready: passed"},
		{"operation.succeeded", nil, "   7 10:04:05 operation.succeeded"},
		{"binding.resolved", map[string]any{"binding": "storage", "provider": "minio.instance/m"}, `   7 10:04:05 binding.resolved binding="storage" provider="minio.instance/m"`},
	}
	for _, c := range cases {
		require.Equal(t, c.want, describe(watchedEvent{Sequence: 7, Type: c.typ, At: at, Payload: c.payload}))
	}
	require.Equal(t, "SUCCEEDED", finalStatus("operation.succeeded"))
	require.Equal(t, "", finalStatus("operation.running"))
	require.Equal(t, operationID("op-1"), operationID(operationID("op-1")), "a global id is taken as it is")
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]bool{
		"OVERFLOW": true, "UNAVAILABLE": true, // a new connection may get through
		"NOT_FOUND": false, "UNAUTHENTICATED": false, "FORBIDDEN": false, "INVALID": false, "INTERNAL": false,
	} {
		if got := retryable(code); got != want {
			t.Errorf("retryable(%s) = %v, want %v", code, got, want)
		}
	}
}
