package executor

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/artifact"
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

// pruneOutputs leaves in an ended operation's artifacts kept on this
// replica's disk (artifact.Dir) only the files its records refer to: a
// file whose record was never committed (the step that would have
// recorded it lost its lease) goes. An object store is left to its own
// lifecycle rules: docs/OPERATIONS.md.
func (e *Executor) pruneOutputs(opID string, arts []capstan.Artifact) {
	dir, ok := e.cfg.Artifacts.(artifact.Dir)
	if opID == "" || !ok {
		return
	}
	keep := map[string]bool{}
	for _, a := range arts {
		keep[a.StorageRef] = true
	}
	// outputs/<op> is where releases before the artifact store kept them.
	for _, top := range []string{artifact.OperationPrefix(opID), filepath.Join("outputs", opID)} {
		_ = filepath.WalkDir(filepath.Join(dir.Root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(dir.Root, path)
			if !keep["file:"+rel] || !d.Type().IsRegular() {
				if err := os.Remove(path); err != nil {
					e.cfg.Log.Warn("output not removed", "operation", opID, "name", rel, "err", err.Error())
				}
			}
			return nil
		})
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
