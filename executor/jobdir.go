package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"syscall"

	"github.com/capstan-dev/capstan"
)

// The job directory holds the operations' working directories: each
// operation's sandbox (sandbox/<op>, its jobs' /tmp/job) and outputs
// (outputs/<op>, their /tmp/outputs), which its jobs write and read for
// as long as it runs. A job's mount table (/proc/self/mountinfo) shows
// the path each bind mount came from, in whatever namespace the job
// reads it, so these directories live apart from the data directory: a
// job learns where the job directory is, never where the data, the
// secret key or the tokens are. What outlives the operation — the
// artifacts its jobs declared — is copied into Dir (keepArtifacts).

// DefaultJobDir is the job directory of the executor whose Dir is dir:
// one of its own in /var/tmp (a disk, where /tmp may be memory), named by
// a hash of dir so that two servers on a machine never share one, and a
// restart finds the one its crash left.
func DefaultJobDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	sum := sha256.Sum256([]byte(abs))
	base := "/var/tmp"
	if info, err := os.Stat(base); err != nil || !info.IsDir() {
		base = os.TempDir()
	}
	return filepath.Join(base, "capstan-jobs-"+hex.EncodeToString(sum[:8]))
}

// makeJobDir creates the job directory (0700) and its sandbox and outputs
// directories. One that is there must be the server's own: a directory,
// not a symlink, owned by the server's uid and writable by no one else —
// in a shared directory such as /var/tmp another user could have made it
// first, to read or swap what jobs write.
func makeJobDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return capstan.Wrap("executor.Start", err)
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return capstan.Wrap("executor.Start", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	switch {
	case !info.IsDir():
		return capstan.Errorf(capstan.EINVALID, "job directory %s is not a directory", dir)
	case ok && int(st.Uid) != os.Geteuid():
		return capstan.Errorf(capstan.EINVALID, "job directory %s belongs to uid %d, not to the server (uid %d): remove it or choose another (--job-dir)", dir, st.Uid, os.Geteuid())
	case info.Mode().Perm()&0o022 != 0:
		return capstan.Errorf(capstan.EINVALID, "job directory %s may be written by others (mode %#o): remove it or choose another (--job-dir)", dir, uint32(info.Mode().Perm()))
	}
	for _, d := range []string{"sandbox", "outputs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o750); err != nil {
			return capstan.Wrap("executor.Start", err)
		}
	}
	return nil
}

// leaveJobDir removes the job directory when nothing is left in it (every
// operation ended): a stopped server leaves no empty directories behind.
func leaveJobDir(dir string) {
	for _, d := range []string{filepath.Join(dir, "sandbox"), filepath.Join(dir, "outputs"), dir} {
		if os.Remove(d) != nil {
			return
		}
	}
}
