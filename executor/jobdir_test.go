package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestDefaultJobDir(t *testing.T) {
	a, b := DefaultJobDir("/srv/capstan/data/executor"), DefaultJobDir("/srv/other/data/executor")
	require.NotEqual(t, a, b, "two servers never share one")
	require.Equal(t, a, DefaultJobDir("/srv/capstan/data/executor"), "a restart finds the one its crash left")
	require.NotContains(t, a, "capstan/data", "the data directory is not in its name")
	require.True(t, strings.HasPrefix(filepath.Base(a), "capstan-jobs-"))
}

// TestAJobDirSomeoneElseMadeIsRefused: in a shared directory such as
// /var/tmp another user may make the job directory first; the server
// refuses to use one it does not own alone.
func TestAJobDirSomeoneElseMadeIsRefused(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "elsewhere")
	require.NoError(t, os.Mkdir(target, 0o700))
	cases := []struct {
		name    string
		prepare func(dir string) error
		want    string
	}{
		{"fresh", func(string) error { return nil }, ""},
		{"the server's own", func(dir string) error { return os.Mkdir(dir, 0o700) }, ""},
		{"writable by others", func(dir string) error {
			if err := os.Mkdir(dir, 0o700); err != nil {
				return err
			}
			return os.Chmod(dir, 0o777)
		}, "may be written by others"},
		{"a symlink", func(dir string) error { return os.Symlink(target, dir) }, "is not a directory"},
		{"a file", func(dir string) error { return os.WriteFile(dir, nil, 0o600) }, ""},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name    string
			prepare func(dir string) error
			want    string
		}{"another user's", func(dir string) error {
			if err := os.Mkdir(dir, 0o700); err != nil {
				return err
			}
			return os.Chown(dir, 65534, 65534)
		}, "belongs to uid 65534"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(root, strings.ReplaceAll(c.name, " ", "-"))
			require.NoError(t, c.prepare(dir))
			err := makeJobDir(dir)
			switch {
			case c.name == "a file":
				require.Error(t, err)
			case c.want == "":
				require.NoError(t, err)
				for _, d := range []string{"sandbox", "outputs"} {
					require.DirExists(t, filepath.Join(dir, d))
				}
				info, err := os.Stat(dir)
				require.NoError(t, err)
				require.Equal(t, os.FileMode(0o700), info.Mode().Perm())
				leaveJobDir(dir)
				require.NoDirExists(t, dir, "an empty job directory goes when the server stops")
			default:
				require.ErrorContains(t, err, c.want)
				require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
				_, err := os.Stat(filepath.Join(target, "sandbox"))
				require.True(t, os.IsNotExist(err), "nothing was made through it")
			}
		})
	}
}

// TestARestoredOutputReplacesWhatIsThere: an artifact restored into an
// operation's outputs (it moved to this replica, or its job directory
// was lost) replaces what a job left at its name — a symlink is replaced,
// never followed — and a file that holds the kept bytes is left alone.
func TestARestoredOutputReplacesWhatIsThere(t *testing.T) {
	outside, outputs := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "passwd")
	require.NoError(t, os.WriteFile(target, []byte("root:x:0:0\n"), 0o600))
	path := filepath.Join(outputs, "report")
	require.NoError(t, os.Symlink(target, path))
	kept := capstan.Artifact{Name: "report", Size: 9, SHA256: "6b5e4b0f2c3fbe3d7c5b55aea1dd0b8b3e5e3e7e1b5c0e5b9b3d1c8f0e6a7b1c"}
	require.False(t, sameFile(path, kept), "a symlink is never what was kept")
	require.NoError(t, writeOutput(path, []byte("all good\n")))
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "root:x:0:0\n", string(data), "the symlink's target is untouched")
	info, err := os.Lstat(path)
	require.NoError(t, err)
	require.True(t, info.Mode().IsRegular())
	sum := sha256.Sum256([]byte("all good\n"))
	kept.SHA256 = hex.EncodeToString(sum[:])
	require.True(t, sameFile(path, kept))
}
