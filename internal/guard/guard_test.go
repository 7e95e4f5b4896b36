package guard_test

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/guard"
)

func TestRecoverEndsOnlyThePanickingGoroutine(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	var ended error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer guard.Recover(log, "test stream", func(err error) { ended = err })
		var m map[string]int
		m["boom"]++ // a nil-map write: a runtime panic, as a nil dereference would be
	}()
	wg.Wait()
	require.Equal(t, capstan.EINTERNAL, capstan.ErrorCode(ended))
	require.Equal(t, "internal error", capstan.ErrorMessage(ended), "the client learns nothing of the panic")
	require.Contains(t, logged.String(), "test stream")
	require.Contains(t, logged.String(), "guard_test.go", "the stack is logged")
}

func TestRecoverWithoutAPanicDoesNothing(t *testing.T) {
	called := false
	func() {
		defer guard.Recover(nil, "quiet", func(error) { called = true })
	}()
	require.False(t, called)
}
