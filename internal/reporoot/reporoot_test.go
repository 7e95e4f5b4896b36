package reporoot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDirIsTheModulesRootFromAnyDirectoryBelowIt(t *testing.T) {
	root, err := Dir() // from this package's directory
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "scripts", "testhosts.sh"))

	other := t.TempDir() // a go.mod of another module, and none above it
	require.NoError(t, os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644))
	require.False(t, declares(filepath.Join(other, "go.mod"), Module))
	require.True(t, declares(filepath.Join(root, "go.mod"), Module))
	t.Chdir(other)
	_, err = Dir()
	require.ErrorContains(t, err, "no go.mod of "+Module)
}
