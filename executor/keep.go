package executor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/artifact"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/secret"
)

// keepArtifacts keeps the files of a job's artifacts in the artifact
// store (Config.Artifacts) under the attempt's keys, from the operation's
// outputs, where its jobs may still change them: an artifact keeps what
// its job left when it ended, with its size and SHA-256. One that cannot
// be kept (not a regular file, larger than artifact.MaxSize, the store
// down) is failed evidence instead of an artifact. A secret artifact's
// value is in the secret store (keepSecrets), never here.
func (l *loop) keepArtifacts(ctx context.Context, node string, attempt int, arts []capstan.Artifact, now time.Time) (kept []capstan.Artifact, missing []capstan.Evidence) {
	for _, a := range arts {
		if a.Sensitivity == capstan.SensitivitySecret {
			kept = append(kept, a)
			continue
		}
		obj, err := keepFile(ctx, l.e.cfg.Artifacts, artifact.Key(l.opID, node, attempt, a.Name), filepath.Join(l.outputs(), a.Name))
		if err != nil {
			missing = append(missing, capstan.Evidence{ProducedBy: node, Item: "artifact " + a.Name, Result: capstan.EvidenceFailed, ObservedAt: now,
				Source: map[string]any{"type": "artifact", "note": "$CAPSTAN_OUTPUTS/" + a.Name + " could not be kept: " + capstan.ErrorMessage(err)}})
			continue
		}
		a.StorageRef, a.Size, a.SHA256 = obj.Ref, obj.Size, obj.SHA256
		kept = append(kept, a)
	}
	return kept, missing
}

// keepFile keeps the regular file a job left at path (never through a
// symlink) in the store under key.
func keepFile(ctx context.Context, store artifact.Store, key, path string) (artifact.Object, error) {
	f, err := local.OpenJobFile(path)
	if err != nil {
		return artifact.Object{}, capstan.Errorf(capstan.EINVALID, "not a regular file")
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return artifact.Object{}, capstan.Wrap("executor.keepFile", err)
	}
	if info.Size() > artifact.MaxSize {
		return artifact.Object{}, capstan.Errorf(capstan.EINVALID, "%d bytes, more than the %d an artifact may hold", info.Size(), artifact.MaxSize)
	}
	return artifact.Put(ctx, store, key, f, info.Size())
}

// restoreOutputs puts back into the operation's outputs, for its jobs
// downstream, the latest artifact of each name its jobs kept, where the
// file there is missing or not what was kept: an operation that moved to
// this replica (its producer ran on another), or resumed with its job
// directory lost. A secret artifact's value comes from the secret store.
// What cannot be read is logged: the consumer then fails on its input.
func (l *loop) restoreOutputs(ctx context.Context, arts []capstan.Artifact) {
	latest := map[string]capstan.Artifact{}
	for _, a := range arts {
		if a.Type != "diagnostics" {
			latest[a.Name] = a // records are in the order they were kept
		}
	}
	var wrote []string
	for name, a := range latest {
		path := filepath.Join(l.outputs(), name)
		if a.SHA256 != "" && sameFile(path, a) {
			continue
		}
		data, err := l.artifactBytes(ctx, a)
		if err != nil {
			l.e.cfg.Log.Warn("artifact not restored for the jobs downstream", "operation", l.opID, "artifact", name, "err", capstan.ErrorMessage(err))
			continue
		}
		if err := writeOutput(path, data); err != nil {
			l.e.cfg.Log.Warn("artifact not restored for the jobs downstream", "operation", l.opID, "artifact", name, "err", err.Error())
			continue
		}
		wrote = append(wrote, path)
	}
	if err := l.e.cfg.Sandbox.Share(wrote...); err != nil {
		l.e.cfg.Log.Warn("restored outputs not shared with the jobs", "operation", l.opID, "err", err.Error())
	}
}

// artifactBytes reads a kept artifact: a secret one's value from the
// secret store, any other through the artifact store, checked.
func (l *loop) artifactBytes(ctx context.Context, a capstan.Artifact) ([]byte, error) {
	if a.Sensitivity == capstan.SensitivitySecret && strings.HasPrefix(a.StorageRef, secret.RefPrefix) {
		v, err := job.SecretValue(ctx, l.e.cfg.Secrets, l.org, "artifact "+a.Name, a.StorageRef)
		return []byte(v), err
	}
	return artifact.Read(ctx, l.e.cfg.Artifacts, a, 0)
}

// sameFile reports whether the regular file at path holds a's bytes.
func sameFile(path string, a capstan.Artifact) bool {
	f, err := local.OpenJobFile(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sum := sha256.New()
	n, err := io.Copy(sum, io.LimitReader(f, artifact.MaxSize+1))
	return err == nil && n == a.Size && hex.EncodeToString(sum.Sum(nil)) == a.SHA256
}

// writeOutput replaces the file at path (whatever a job left there, a
// symlink included, which is replaced, never followed) with data.
func writeOutput(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".restore-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails once renamed
	if _, err := io.Copy(tmp, bytes.NewReader(data)); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o640); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("restoring %s: %w", filepath.Base(path), err)
	}
	return nil
}
