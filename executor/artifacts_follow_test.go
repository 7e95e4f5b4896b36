package executor

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/artifact"
)

// TestArtifactsAreNeverFollowed: what a job leaves where its artifacts
// belong — a symlink to a file it must not read, a dangling symlink to a
// file it wants root to create, a FIFO — is refused, never followed,
// never waited on.
func TestArtifactsAreNeverFollowed(t *testing.T) {
	outside := t.TempDir()
	keyFile := filepath.Join(outside, "secret.key")
	require.NoError(t, os.WriteFile(keyFile, []byte("THE-SECRET-KEY-4711"), 0o600))
	planted := filepath.Join(outside, "ld.so.preload")
	outputs := t.TempDir()
	require.NoError(t, os.Symlink(keyFile, filepath.Join(outputs, "token")))
	require.NoError(t, os.Symlink(planted, filepath.Join(outputs, "report")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(outputs, "cred"), 0o600))
	declared := []capstan.ArtifactSpec{{Name: "token", Type: "t", Sensitivity: capstan.SensitivitySecret},
		{Name: "report", Type: "r", Sensitivity: capstan.SensitivityInternal}, {Name: "cred", Type: "c", Sensitivity: capstan.SensitivitySecret}}
	done := make(chan struct{})
	var arts []capstan.Artifact
	var missing []capstan.Evidence
	var secrets [][]byte
	go func() {
		defer close(done)
		arts, missing, secrets = collectArtifacts("job", declared, outputs, []byte("/attacker/lib.so\n"), time.Now(), nil)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a FIFO held the server")
	}
	require.Empty(t, secrets, "the key file was not read")
	require.Empty(t, arts)
	require.Len(t, missing, 3)
	_, err := os.Stat(planted)
	require.True(t, os.IsNotExist(err), "nothing was created through the dangling symlink")
	info, err := os.Stat(keyFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the key file's mode was not touched")
	_, err = keepFile(context.Background(), artifact.Dir{Root: t.TempDir()}, "k", filepath.Join(outputs, "report"))
	require.Error(t, err, "nor is it kept through it")
	_, err = artifact.Read(context.Background(), artifact.Dir{}, capstan.Artifact{Name: "report", StorageRef: "file:" + filepath.Join(outputs, "report")}, 0)
	require.Error(t, err, "the analyzer does not read through it either")
}
