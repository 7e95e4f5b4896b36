package executor

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
)

// An operation's directories in the job directory (jobdir.go) — its
// sandbox, its jobs' working directory, and its outputs, where they write
// artifacts — are of no use once the operation ended: the artifacts are
// kept in Dir, its diagnostics and evidence elsewhere. So they are
// removed then (Config.KeepSandboxes keeps them for debugging), and a
// start removes the ones a crash left behind.

// dropSandbox removes a finished operation's sandbox and outputs from
// the job directory.
func (e *Executor) dropSandbox(opID string) {
	if e.cfg.KeepSandboxes || opID == "" {
		return
	}
	for _, d := range []string{"sandbox", "outputs"} {
		if err := removeTree(filepath.Join(e.cfg.JobDir, d, opID)); err != nil {
			e.cfg.Log.Warn("operation directory not removed", "operation", opID, "dir", d, "err", err.Error())
		}
	}
}

// pruneOutputs leaves in an ended operation's kept artifacts only the
// files its recorded artifacts refer to: a copy whose record was never
// committed (the step that would have recorded it lost its lease) goes.
func (e *Executor) pruneOutputs(opID string, arts []capstan.Artifact) {
	if opID == "" {
		return
	}
	dir := filepath.Join(e.cfg.Dir, "outputs", opID)
	prefix := "file:" + filepath.Join("outputs", opID) + "/"
	keep := map[string]bool{}
	for _, a := range arts {
		if name, ok := strings.CutPrefix(a.StorageRef, prefix); ok {
			keep[name] = true
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, d := range entries {
		if keep[d.Name()] && d.Type().IsRegular() {
			continue
		}
		if err := removeTree(filepath.Join(dir, d.Name())); err != nil {
			e.cfg.Log.Warn("output not removed", "operation", opID, "name", d.Name(), "err", err.Error())
		}
	}
}

// sweepSandboxes removes the directories in the job directory of
// operations that are not unfinished and whose directory predates since
// (this start): ones a crash left between an operation's end and their
// removal, and an ansible job's workspace a crash left. A directory made
// since belongs to an operation started meanwhile.
func (e *Executor) sweepSandboxes(unfinished map[string]bool, since time.Time) {
	if e.cfg.KeepSandboxes {
		return
	}
	for _, d := range []string{"sandbox", "outputs"} {
		root := filepath.Join(e.cfg.JobDir, d)
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, entry := range entries {
			if !entry.IsDir() || unfinished[entry.Name()] {
				continue
			}
			info, err := entry.Info()
			if err != nil || !info.ModTime().Before(since) {
				continue
			}
			if err := removeTree(filepath.Join(root, entry.Name())); err != nil {
				e.cfg.Log.Warn("operation directory not removed", "operation", entry.Name(), "dir", d, "err", err.Error())
			}
		}
	}
}

// removeTree removes a directory a job wrote. A job may have left
// directories without write or search permission for its owner, which
// RemoveAll cannot empty when the server is not root: each pass opens up
// the directories it can reach (WalkDir never follows a symlink) and
// tries again, one level deeper each time.
func removeTree(dir string) error {
	var err error
	for range 16 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, _ error) error {
			if d != nil && d.IsDir() {
				_ = os.Chmod(path, 0o700)
			}
			return nil
		})
	}
	return err
}
