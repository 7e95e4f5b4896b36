package executor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/artifact"
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

// diagnostics keeps a job's output, masked, and returns its artifact: in
// the operation's log on this replica's disk, or, when the artifact
// store is shared by replicas, as an object of its own there.
func (l *loop) diagnostics(ctx context.Context, node, name string, attempt int, out []byte) *capstan.Artifact {
	a := &capstan.Artifact{Type: "diagnostics", Name: fmt.Sprintf("%s-%s-%d", node, name, attempt), Sensitivity: capstan.SensitivityInternal, ProducedBy: node}
	masked := l.redactor().Bytes(out)
	var err error
	if l.e.cfg.Artifacts.Shared() {
		var obj artifact.Object
		obj, err = artifact.Put(ctx, l.e.cfg.Artifacts, artifact.Key(l.opID, node, attempt, "diagnostics-"+name), bytes.NewReader(masked), int64(len(masked)))
		a.StorageRef, a.Size, a.SHA256 = obj.Ref, obj.Size, obj.SHA256
	} else {
		a.StorageRef, err = l.diag.append(masked)
	}
	if err != nil {
		l.e.cfg.Log.Warn("job output not kept", "operation", l.opID, "node", node, "err", capstan.ErrorMessage(err))
		return nil
	}
	return a
}
