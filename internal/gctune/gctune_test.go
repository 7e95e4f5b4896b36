package gctune_test

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/gctune"
)

func TestApplySetsThePercentUnlessGOGCIsSet(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	require.NoError(t, os.Unsetenv("GOGC"))
	require.Equal(t, 100, gctune.Apply(), "it returns what was in force")
	require.Equal(t, gctune.Percent, debug.SetGCPercent(gctune.Percent), "and sets its own")

	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50) // as the runtime read it at start
	require.Equal(t, 50, gctune.Apply())
	require.Equal(t, 50, debug.SetGCPercent(50), "the operator's GOGC stands")
}
