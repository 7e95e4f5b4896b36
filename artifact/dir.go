package artifact

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/capstan-dev/capstan"
)

// Dir keeps artifacts as files under a directory only the server writes
// (the executor's data directory): one process reads them. Its
// references are file:<path relative to the directory>.
type Dir struct{ Root string }

// Shared is false: another replica has a directory of its own.
func (Dir) Shared() bool { return false }

// Put writes the object beside its name and renames it there: a reader
// sees the whole object or none.
func (d Dir) Put(ctx context.Context, key string, r io.Reader, size int64) (string, error) {
	if !filepath.IsLocal(key) {
		return "", capstan.Errorf(capstan.EINVALID, "artifact key %q leaves the artifact directory", key)
	}
	dst := filepath.Join(d.Root, key)
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return "", capstan.Wrap("artifact.Put", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".keep-*")
	if err != nil {
		return "", capstan.Wrap("artifact.Put", err)
	}
	defer os.Remove(tmp.Name()) // fails once renamed
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o640); err != nil {
		tmp.Close()
		return "", capstan.Wrap("artifact.Put", err)
	}
	if err := tmp.Close(); err != nil {
		return "", capstan.Wrap("artifact.Put", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", capstan.Wrap("artifact.Put", err)
	}
	return "file:" + key, nil
}

// Open opens the file a file: reference names, never through a
// symlink, and only in the directory (a reference kept before references
// were relative names its absolute path there; one elsewhere is refused).
func (d Dir) Open(ctx context.Context, ref string, from, to int64) (io.ReadCloser, error) {
	path, ok := strings.CutPrefix(ref, "file:")
	if !ok {
		return nil, capstan.Errorf(capstan.EINVALID, "artifact reference %q is not kept on this replica's disk", ref)
	}
	if filepath.IsAbs(path) { // kept before references were relative: still under the directory
		root, err := filepath.Abs(d.Root)
		rel, rerr := filepath.Rel(root, path)
		if err != nil || rerr != nil || !filepath.IsLocal(rel) {
			return nil, capstan.Errorf(capstan.EINVALID, "artifact reference %q leaves the artifact directory", ref)
		}
		path = rel
	}
	if !filepath.IsLocal(path) {
		return nil, capstan.Errorf(capstan.EINVALID, "artifact reference %q leaves the artifact directory", ref)
	}
	path = filepath.Join(d.Root, path)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, capstan.Errorf(capstan.ENOTFOUND, "artifact %q is not on this replica's disk", ref)
	case errors.Is(err, syscall.ELOOP):
		return nil, capstan.Errorf(capstan.EINVALID, "artifact %q is a symlink", ref)
	case err != nil:
		return nil, capstan.Wrap("artifact.Open", err)
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, capstan.Errorf(capstan.EINVALID, "artifact %q is not a regular file", ref)
	}
	if to <= 0 {
		return f, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, from, to-from), f}, nil
}
