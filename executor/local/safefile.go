package local

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/capstan-dev/capstan"
)

// Files in a job's outputs are the job's: it may leave a symlink (to
// /etc/shadow, to the secret key), a FIFO, a device or a huge file where
// an artifact should be. The server, which may run as root outside the
// job's namespaces, reads and creates them only through these functions:
// never following a symlink, never blocking on a FIFO, only regular
// files, and at most a bounded number of bytes.

// errNotRegular is a path that is not a regular file of its own.
var errNotRegular = errors.New("not a regular file")

// OpenJobFile opens path for reading without following a final symlink
// or blocking, and only when it is a regular file.
func OpenJobFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: a symlink: %w", path, errNotRegular)
		}
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, errNotRegular)
	}
	return f, nil
}

// readJobFile reads at most limit bytes of a job's regular file; a larger
// file is an error.
func readJobFile(path string, limit int64) ([]byte, error) {
	f, err := OpenJobFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return data, nil
}

// CreateJobFile creates a new file in a job's directory with data; it
// fails if anything (a symlink included) is there already.
func CreateJobFile(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// JobFileExists reports whether a job left something at path (not
// following a symlink).
func JobFileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// WriteOutput writes a remote job's artifact into its local outputs
// directory as a local job would have left it (never through a symlink,
// never over a file that is there).
func WriteOutput(dir, name string, data []byte) error {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return capstan.Errorf(capstan.EINVALID, "artifact name %q is not a file name", name)
	}
	return CreateJobFile(filepath.Join(dir, name), data, 0o640)
}

// ReadJobFile reads at most limit bytes of a regular file a job wrote,
// never through a symlink and never blocking on a FIFO: how a runner
// reads what its job left.
func ReadJobFile(path string, limit int64) ([]byte, error) { return readJobFile(path, limit) }
