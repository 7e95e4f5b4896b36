package executor

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
)

// An operation's sandbox directory is its jobs' working directory: what
// they leave there (up to the disk quota, per operation) is of no use once
// the operation ended — its outputs, diagnostics and evidence are kept
// elsewhere — so it is removed then (Config.KeepSandboxes keeps it for
// debugging), and a start removes the ones a crash left behind.

// dropSandbox removes a finished operation's sandbox directory.
func (e *Executor) dropSandbox(opID string) {
	if e.cfg.KeepSandboxes || opID == "" {
		return
	}
	if err := removeTree(filepath.Join(e.cfg.Dir, "sandbox", opID)); err != nil {
		e.cfg.Log.Warn("sandbox not removed", "operation", opID, "err", err.Error())
	}
}

// pruneOutputs leaves in an ended operation's outputs directory only the
// files its recorded artifacts refer to: what its jobs wrote there
// besides (undeclared files, directories, the files of secret artifacts
// the secret store now holds, those of failed attempts) goes.
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

// sweepSandboxes removes the sandboxes of operations that are not
// unfinished and whose directory predates since (this start): ones a crash
// left between an operation's end and its sandbox's removal. A directory
// made since belongs to an operation started meanwhile.
func (e *Executor) sweepSandboxes(unfinished map[string]bool, since time.Time) {
	if e.cfg.KeepSandboxes {
		return
	}
	root := filepath.Join(e.cfg.Dir, "sandbox")
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, d := range entries {
		if !d.IsDir() || unfinished[d.Name()] {
			continue
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(since) {
			continue
		}
		e.dropSandbox(d.Name())
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
