package executor

import (
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

// TestLostOutputsAreRestored: an operation that resumes with its outputs
// gone gets back the artifacts kept so far; a symlink among the kept
// files (there never is one) would not be followed.
func TestLostOutputsAreRestored(t *testing.T) {
	kept, outputs := t.TempDir(), filepath.Join(t.TempDir(), "outputs")
	require.NoError(t, os.WriteFile(filepath.Join(kept, "report"), []byte("all good\n"), 0o640))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(kept, "link")))
	require.NoError(t, os.Mkdir(outputs, 0o750))
	wrote := restoreOutputs(kept, outputs)
	require.Equal(t, []string{filepath.Join(outputs, "report")}, wrote)
	data, err := os.ReadFile(filepath.Join(outputs, "report"))
	require.NoError(t, err)
	require.Equal(t, "all good\n", string(data))
	_, err = os.Lstat(filepath.Join(outputs, "link"))
	require.True(t, os.IsNotExist(err))
}
