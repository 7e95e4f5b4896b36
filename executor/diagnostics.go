package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/capstan-dev/capstan"
)

// diagnosticsLog keeps every job output of one operation in one append-only
// file: one open per operation instead of one file per attempt (creating
// files dominated the cost of small jobs). An artifact refers to its part
// as file:<path>#<offset>-<end>.
type diagnosticsLog struct {
	mu   sync.Mutex
	path string
	// ref is path as artifacts name it: relative to the executor's
	// directory, so no response shows where the server keeps its data.
	ref  string
	f    *os.File
	size int64
}

// append writes one output and returns its artifact reference.
func (d *diagnosticsLog) append(out []byte) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		if err := os.MkdirAll(filepath.Dir(d.path), 0o750); err != nil {
			return "", err
		}
		f, err := os.OpenFile(d.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
		if err != nil {
			return "", err
		}
		info, err := f.Stat()
		if err != nil {
			f.Close()
			return "", err
		}
		d.f, d.size = f, info.Size()
	}
	if _, err := d.f.Write(out); err != nil {
		return "", err
	}
	start := d.size
	d.size += int64(len(out))
	return fmt.Sprintf("file:%s#%d-%d", d.ref, start, d.size), nil
}

func (d *diagnosticsLog) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f != nil {
		d.f.Close()
		d.f = nil
	}
}

// maxArtifactRead bounds what is read of an artifact's file.
const maxArtifactRead = 64 << 20

// ReadArtifact returns the content a file: storage reference points at
// (the whole file, or the #offset-end part of it). A reference is
// relative to the executor's directory dir (one kept before references
// were relative names its absolute path).
func ReadArtifact(dir, ref string) ([]byte, error) {
	path, ok := strings.CutPrefix(ref, "file:")
	if !ok {
		return nil, capstan.Errorf(capstan.EINVALID, "artifact reference %q is not a file", ref)
	}
	path, part, ranged := strings.Cut(path, "#")
	if !filepath.IsAbs(path) {
		if !filepath.IsLocal(path) {
			return nil, capstan.Errorf(capstan.EINVALID, "artifact reference %q leaves the executor's directory", ref)
		}
		path = filepath.Join(dir, path)
	}
	// The file may be one a job wrote (an artifact it declared): never
	// through a symlink, only a regular file, bounded.
	if !ranged {
		return readJobFile(path, maxArtifactRead)
	}
	from, to, _ := strings.Cut(part, "-")
	start, err1 := strconv.ParseInt(from, 10, 64)
	end, err2 := strconv.ParseInt(to, 10, 64)
	if err1 != nil || err2 != nil || start < 0 || end < start || end-start > maxArtifactRead {
		return nil, capstan.Errorf(capstan.EINVALID, "artifact reference %q has a bad range", ref)
	}
	f, err := openJobFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, end-start)
	if _, err := f.ReadAt(data, start); err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "artifact reference %q has a bad range", ref)
	}
	return data, nil
}

// diagnostics keeps a job's output in the operation's log and returns its artifact.
func (l *loop) diagnostics(node, name string, attempt int, out []byte) *capstan.Artifact {
	ref, err := l.diag.append(l.redactor().Bytes(out))
	if err != nil {
		l.e.cfg.Log.Warn("job output not kept", "operation", l.opID, "node", node, "err", err.Error())
		return nil
	}
	return &capstan.Artifact{Type: "diagnostics", Name: fmt.Sprintf("%s-%s-%d", node, name, attempt), Sensitivity: capstan.SensitivityInternal,
		StorageRef: ref, ProducedBy: node}
}
