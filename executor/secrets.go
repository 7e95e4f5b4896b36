package executor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/artifact"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/secret"
)

// resolveSecrets replaces every secret:<name> value of a job's variables
// — and every one inside a binding's attributes (JSON) that the secret
// store keeps — with the secret's value: it exists only in the job's
// environment, inside its sandbox.
func (l *loop) resolveSecrets(ctx context.Context, env map[string]string) error {
	for k, v := range env {
		switch {
		case strings.HasPrefix(v, secret.RefPrefix):
			value, err := l.secretValue(ctx, k, v)
			if err != nil {
				return err
			}
			env[k] = value
		case strings.HasPrefix(k, "CAPSTAN_BINDING_") && strings.HasSuffix(k, "_ATTRIBUTES") && strings.Contains(v, `"`+secret.RefPrefix):
			var attrs map[string]any
			if json.Unmarshal([]byte(v), &attrs) != nil {
				continue
			}
			for ak, av := range attrs {
				if ref, ok := av.(string); ok && strings.HasPrefix(ref, secret.RefPrefix) {
					// A catalog's reference may name a secret of the
					// provider's own secret manager: one Capstan does not
					// keep stays a reference for the job to follow.
					value, err := l.secretValue(ctx, k+"."+ak, ref)
					switch capstan.ErrorCode(err) {
					case "":
						attrs[ak] = value
					case capstan.ENOTFOUND, capstan.EUNAVAILABLE, capstan.EINVALID:
					default:
						return err
					}
				}
			}
			data, err := json.Marshal(attrs)
			if err != nil {
				return capstan.Wrap("executor.resolveSecrets", err)
			}
			env[k] = string(data)
		}
	}
	return nil
}

// secretValue is the value a secret:<name> reference (named by what,
// for errors) refers to.
func (l *loop) secretValue(ctx context.Context, what, ref string) (string, error) {
	return job.SecretValue(ctx, l.e.cfg.Secrets, l.org, what, ref)
}

// dropFiles removes the secret artifacts' files a job left in outputs
// (a symlink is removed, never followed).
func dropFiles(outputs string, declared []capstan.ArtifactSpec) {
	for _, a := range declared {
		if a.Sensitivity == capstan.SensitivitySecret {
			_ = os.Remove(filepath.Join(outputs, a.Name))
		}
	}
}

// secretArtifactName is where a job's secret artifact is kept in the
// secret store: one name per attempt, so a late value (an earlier
// attempt ending on an owner deposed since) never replaces the one the
// operation recorded.
func secretArtifactName(opID, node string, attempt int, artifact string) string {
	return "operations/" + strings.ToLower(opID) + "/" + strings.ToLower(node) + "/" + strconv.Itoa(attempt) + "/" + strings.ToLower(artifact)
}

// keepSecrets puts the values of a job's secret artifacts into the secret
// store, encrypted, and points the artifacts at them: the file in the
// operation's outputs stays for the jobs downstream until the operation
// ends (dropSandbox), and is never copied into Dir (keepArtifacts).
func (l *loop) keepSecrets(ctx context.Context, node string, attempt int, arts []capstan.Artifact, values [][]byte) error {
	i := 0
	for k := range arts {
		a := &arts[k]
		if a.Sensitivity != capstan.SensitivitySecret {
			continue
		}
		if l.e.cfg.Secrets == nil {
			if err := l.keepUnsealed(ctx, node, attempt, a); err != nil {
				return err
			}
			i++
			continue
		}
		value := values[i]
		i++
		name := secretArtifactName(l.opID, node, attempt, a.Name)
		if len(value) < secret.MinValueLen {
			return capstan.Errorf(capstan.EINVALID, "secret artifact %s has fewer than %d bytes", a.Name, secret.MinValueLen)
		}
		if err := l.e.cfg.Secrets.Put(ctx, l.org, name, value); err != nil {
			return err
		}
		a.StorageRef = secret.Ref(name)
	}
	return nil
}

// keepUnsealed keeps a secret artifact's file where an executor without
// a secret store keeps it (tests, tools): on this replica's own disk,
// which only the server reads, never in a store replicas share.
func (l *loop) keepUnsealed(ctx context.Context, node string, attempt int, a *capstan.Artifact) error {
	if l.e.cfg.Artifacts.Shared() {
		return capstan.Errorf(capstan.EUNAVAILABLE, "secret artifact %s cannot be kept: this server has no secret store, and a shared artifact store never holds a secret", a.Name)
	}
	obj, err := keepFile(ctx, l.e.cfg.Artifacts, artifact.Key(l.opID, node, attempt, a.Name), filepath.Join(l.outputs(), a.Name))
	if err != nil {
		return err
	}
	a.StorageRef, a.Size, a.SHA256 = obj.Ref, obj.Size, obj.SHA256
	return nil
}

// redactor masks every secret value of the organization (nil: none).
func (l *loop) redactor() *secret.Redactor {
	if l.e.cfg.Secrets == nil {
		return nil
	}
	r, err := l.e.cfg.Secrets.Redactor(context.Background(), l.org)
	if err != nil {
		l.e.cfg.Log.Warn("secret values not loaded for masking: outputs are withheld whole", "operation", l.opID, "err", capstan.ErrorMessage(err))
		return secret.Withhold()
	}
	return r
}
