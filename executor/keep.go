package executor

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
)

// keepArtifacts copies the files of a job's artifacts (those its storage
// reference names as files) from the operation's outputs, where its jobs
// may still change them, into to, which only the server writes: an
// artifact keeps what its job left when it ended. One that cannot be
// copied is failed evidence instead of an artifact.
func keepArtifacts(node string, arts []capstan.Artifact, from, to string, now time.Time) (kept []capstan.Artifact, missing []capstan.Evidence) {
	for _, a := range arts {
		if !strings.HasPrefix(a.StorageRef, "file:") {
			kept = append(kept, a)
			continue
		}
		if err := copyJobFile(filepath.Join(from, a.Name), filepath.Join(to, a.Name)); err != nil {
			missing = append(missing, capstan.Evidence{ProducedBy: node, Item: "artifact " + a.Name, Result: capstan.EvidenceFailed, ObservedAt: now,
				Source: map[string]any{"type": "artifact", "note": "$CAPSTAN_OUTPUTS/" + a.Name + " could not be kept: " + capstan.ErrorMessage(err)}})
			continue
		}
		kept = append(kept, a)
	}
	return kept, missing
}

// copyJobFile copies the regular file a job left at src (never through a
// symlink) to dst, replacing what was there at once: a reader sees the
// old copy or the new one, never half of one.
func copyJobFile(src, dst string) error {
	in, err := openJobFile(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".keep-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails once renamed
	if _, err := io.Copy(tmp, in); err != nil {
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
	return os.Rename(tmp.Name(), dst)
}

// restoreOutputs puts the artifacts kept so far back into an operation's
// outputs that were lost while it ran, for its jobs downstream, and
// returns the files it wrote. Secret artifacts are not among them: their
// values are in the secret store alone.
func restoreOutputs(kept, outputs string) []string {
	entries, err := os.ReadDir(kept)
	if err != nil {
		return nil
	}
	var wrote []string
	for _, d := range entries {
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".keep-") {
			continue
		}
		dst := filepath.Join(outputs, d.Name())
		if copyJobFile(filepath.Join(kept, d.Name()), dst) == nil {
			wrote = append(wrote, dst)
		}
	}
	return wrote
}
