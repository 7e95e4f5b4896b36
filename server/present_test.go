package server

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// TestAPendingAnswerNamesItsCommand: a PENDING error reaches the client
// with the command and operation it names as extensions, beside its
// code.
func TestAPendingAnswerNamesItsCommand(t *testing.T) {
	present := presentError(slog.New(slog.NewTextHandler(io.Discard, nil)))
	got := present(context.Background(), &capstan.Error{Code: capstan.EPENDING, Message: "recorded as command c1",
		Extensions: map[string]any{"command": "c1", "operation": "T3A6MQ"}})
	require.Equal(t, map[string]any{"code": capstan.EPENDING, "command": "c1", "operation": "T3A6MQ"}, got.Extensions)
	require.Equal(t, "recorded as command c1", got.Message)
}
