package executor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/secret"
)

// attempt runs on a worker: the job (or its compensation) unless only the
// probes are asked for, then every evidence probe of what ran.
//
// Each job, compensation and probe starts only while the shard's window
// is open (window.go): a refused one leaves the attempt refused, and
// prior, when the loop starts it again, is where it stopped.
func (l *loop) attempt(ctx context.Context, n *capstan.PlanNode, attempt int, kind attemptKind, scope attemptScope, prior *nodeResult) nodeResult {
	r := nodeResult{node: n.ID, attempt: attempt, kind: kind}
	if prior != nil {
		r = *prior
		r.refused, r.again = false, queued{}
	}
	if n.Type == capstan.NodeAIAnalysis {
		return l.analysis(ctx, n, r, scope) // side-effect free: after a restart it simply runs again
	}
	probes := n.Probes
	if n.Intervention != nil {
		probes = n.Intervention.Verification
	}
	env := l.jobEnv(n)
	// The attempt's span (emitted when it ends: trace.go), for a job that
	// traces too (W3C trace context).
	env["TRACEPARENT"] = l.e.cfg.TraceIDs.Traceparent(l.org, l.opID, n.ID, attempt)
	if scope.plan != nil {
		bindings, err := l.bindingEnv(ctx, scope.plan, n)
		if err != nil {
			r.res = job.Result{ExitCode: -1, ErrKind: "runner", Err: fmt.Errorf("reading the providers bound to %s: %w", n.ID, err)}
			return r
		}
		for k, v := range bindings {
			env[k] = v
		}
	}
	if err := l.resolveSecrets(ctx, env); err != nil {
		r.res = job.Result{ExitCode: -1, ErrKind: "secret", Err: fmt.Errorf("%s: %s", n.ID, capstan.ErrorMessage(err))}
		return r
	}
	desired, err := l.desiredFor(ctx, scope.plan, scope.resource)
	if err != nil {
		r.res = job.Result{ExitCode: -1, ErrKind: "runner", Err: fmt.Errorf("reading the desired state of %s: %w", scope.resource, err)}
		return r
	}
	for k, v := range desired {
		if scalar(v) {
			env["CAPSTAN_DESIRED_"+envName(k)] = fmt.Sprint(v)
		}
	}
	if _, name, ok := capstan.SplitResourceKey(scope.resource); ok {
		env["CAPSTAN_RESOURCE_NAME"] = name // the resource the operation acts on: a namespace's name, a release's
	}
	hosts, err := l.targets(ctx, scope.plan, n)
	if err != nil {
		r.res = job.Result{ExitCode: -1, ErrKind: job.ErrKindTarget, Err: fmt.Errorf("%s: %s", n.ID, capstan.ErrorMessage(err))}
		return r
	}
	if n.Job != nil {
		probes = n.Job.Outputs.Evidence
		spec := n.Job.Run
		if kind == kindCompensate {
			spec, probes = *n.Job.Controls.Rollback.Compensation, n.Job.Controls.Rollback.Evidence
		}
		trustOnFirstUse(spec, hosts[spec.Target])
		if kind != kindProbes && !r.ran {
			ran := l.runJob(ctx, n, attempt, kind, spec, env, hosts[spec.Target], desired, &r)
			r.trusted = l.trustedKeys(ctx, n.ID, hosts)
			if !ran {
				return r
			}
		}
	}
	target := job.ProbeTarget{Org: l.org, Resource: scope.resource, Dir: l.sandbox(), Outputs: l.outputs(), Env: env, Made: scope.made, Providers: providers(scope.plan), Hosts: hosts, Desired: desired}
	for ; r.probed < len(probes); r.probed++ {
		if !l.window.Open() {
			r.refused = true
			return r
		}
		p := probes[r.probed]
		result, source, output := l.e.cfg.Prober.Run(ctx, p, target)
		if len(output) > 0 {
			if d := l.diagnostics(ctx, n.ID, "probe-"+p.Name, attempt, redact(output, r.secrets)); d != nil {
				r.artifacts = append(r.artifacts, *d)
				source["output_artifact"] = d.Name
			}
		}
		r.evidence = append(r.evidence, capstan.Evidence{ProducedBy: n.ID, Capability: p.Capability, Item: p.Name, Result: result, Source: source, ObservedAt: *l.now()})
	}
	return r
}

// attemptScope is what a worker knows of its operation: the resource it
// changes and the plan's nodes and bindings (read-only, shared with the
// loop).
type attemptScope struct {
	resource string
	nodes    map[string]*capstan.PlanNode
	// plan is the plan as the loop holds it (read-only): its bindings.
	plan *capstan.Plan
	// made are the capabilities the operation's succeeded nodes made,
	// for a node with capability probes.
	made []string
}

// providers maps each resolved requirement of the plan to its provider.
func providers(p *capstan.Plan) map[string]string {
	if p == nil {
		return nil
	}
	out := map[string]string{}
	for _, b := range p.Bindings {
		if b.Status == capstan.BindingResolved && b.Provider != nil {
			out[b.ID] = b.Provider.ResourceKey
		}
	}
	return out
}

// runJob runs one job attempt through its runner and collects what it
// produced; it reports whether the probes should run next.
func (l *loop) runJob(ctx context.Context, n *capstan.PlanNode, attempt int, kind attemptKind, spec capstan.RunSpec, env map[string]string, target *job.Target, desired map[string]any, r *nodeResult) bool {
	runner := l.e.cfg.Runners[spec.Runner]
	if runner == nil {
		r.res = job.Result{ExitCode: -1, ErrKind: "runner", Err: fmt.Errorf("no %s runner", spec.Runner)}
		return false
	}
	var declared []capstan.ArtifactSpec
	if kind == kindRun {
		declared = n.Job.Outputs.Artifacts
	}
	if !l.window.Open() {
		r.refused = true // no job starts outside the window; probes neither
		return false
	}
	if err := ctx.Err(); err != nil { // the shard ended while the task waited for a worker
		r.res = job.Result{ExitCode: -1, ErrKind: "cancelled", Err: err}
		return false
	}
	r.res = runner.Run(ctx, job.Job{OperationID: l.opID, NodeID: n.ID, Attempt: attempt, Dir: l.sandbox(), Spec: spec, Env: env,
		Outputs: l.outputs(), Artifacts: declared, Target: target, Desired: desired, Deadline: l.window})
	r.ran = true
	if len(r.res.Evidence) > 0 {
		// What a runner observed (the objects it applied) holds no
		// secret of the organization once recorded.
		red := l.redactor()
		for _, e := range r.res.Evidence {
			e.ProducedBy, e.ObservedAt, e.Source = n.ID, *l.now(), red.Map(e.Source)
			r.evidence = append(r.evidence, e)
		}
	}
	if r.res.Err == nil {
		var missing []capstan.Evidence
		r.artifacts, missing, r.secrets = collectArtifacts(n.ID, declared, l.outputs(), r.res.Output, *l.now(), l.redactor())
		r.evidence = append(r.evidence, missing...)
		if len(r.secrets) > 0 && !l.window.Open() { // a deposed owner writes no secret (its successor decides on the attempt)
			r.res = job.Result{ExitCode: -1, ErrKind: job.ErrKindLease, Err: fmt.Errorf("%s: the executor's lease ran out before the job's secret artifacts were kept", n.ID)}
			r.artifacts = nil // a failed attempt keeps none
			dropFiles(l.outputs(), declared)
			return false
		}
		if err := l.keepSecrets(ctx, n.ID, attempt, r.artifacts, r.secrets); err != nil {
			r.res = job.Result{ExitCode: -1, ErrKind: "secret", Err: fmt.Errorf("keeping %s's secret artifacts: %s", n.ID, capstan.ErrorMessage(err))}
			r.artifacts = nil // a failed attempt keeps none
			dropFiles(l.outputs(), declared)
			return false
		}
		r.artifacts, missing = l.keepArtifacts(ctx, n.ID, attempt, r.artifacts, *l.now())
		r.evidence = append(r.evidence, missing...)
	} else {
		// A failed job's secret artifacts are not kept, but what it
		// printed of them is masked, and their files go.
		r.secrets, _ = secretValues(declared, l.outputs())
		dropFiles(l.outputs(), declared)
	}
	name := "output"
	if kind == kindCompensate {
		name = "compensation"
	}
	if d := l.diagnostics(ctx, n.ID, name, attempt, redact(r.res.Output, r.secrets)); d != nil {
		r.artifacts = append(r.artifacts, *d)
	}
	return r.res.Err == nil
}

// collectArtifacts records a job's declared artifacts as references to
// the files it wrote in its outputs directory. A non-secret artifact the
// job did not write is its standard output, masked (every secret value of
// the organization, and the values of the secret artifacts it wrote); a
// secret one must be written (its value never leaves the file and the
// secret store: invariant 10), or the job has failed evidence. The secret
// values are returned, in the order of the secret artifacts, to keep and
// to redact diagnostics.
func collectArtifacts(node string, declared []capstan.ArtifactSpec, dir string, stdout []byte, now time.Time, org *secret.Redactor) (arts []capstan.Artifact, missing []capstan.Evidence, secrets [][]byte) {
	secrets, written := secretValues(declared, dir)
	masked := org.Bytes(redact(stdout, secrets))
	for _, a := range declared {
		path := filepath.Join(dir, a.Name)
		switch {
		case a.Sensitivity == capstan.SensitivitySecret && written[a.Name]:
		case a.Sensitivity == capstan.SensitivitySecret:
			missing = append(missing, capstan.Evidence{ProducedBy: node, Item: "artifact " + a.Name, Result: capstan.EvidenceFailed, ObservedAt: now,
				Source: map[string]any{"type": "artifact", "note": "the job did not write $CAPSTAN_OUTPUTS/" + a.Name + " as a regular file of at most 64 KiB"}})
			continue
		case local.JobFileExists(path):
			if f, err := local.OpenJobFile(path); err == nil {
				f.Close()
			} else {
				missing = append(missing, capstan.Evidence{ProducedBy: node, Item: "artifact " + a.Name, Result: capstan.EvidenceFailed, ObservedAt: now,
					Source: map[string]any{"type": "artifact", "note": "$CAPSTAN_OUTPUTS/" + a.Name + " is not a regular file"}})
				continue
			}
		default:
			if local.CreateJobFile(path, masked, 0o640) != nil {
				missing = append(missing, capstan.Evidence{ProducedBy: node, Item: "artifact " + a.Name, Result: capstan.EvidenceFailed, ObservedAt: now,
					Source: map[string]any{"type": "artifact", "note": "the job's output could not be kept as " + a.Name}})
				continue
			}
		}
		arts = append(arts, capstan.Artifact{Type: a.Type, Name: a.Name, Sensitivity: a.Sensitivity, ProducedBy: node}) // its reference once kept
	}
	return arts, missing, secrets
}

// secretValues reads the secret artifacts a job wrote (regular files of
// at most secret.MaxValueLen, never through a symlink), in declaration
// order, and makes them readable by the operation's jobs alone.
func secretValues(declared []capstan.ArtifactSpec, dir string) (values [][]byte, written map[string]bool) {
	written = map[string]bool{}
	for _, a := range declared {
		if a.Sensitivity != capstan.SensitivitySecret {
			continue
		}
		f, err := local.OpenJobFile(filepath.Join(dir, a.Name))
		if err != nil {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(f, secret.MaxValueLen+1))
		if err == nil && len(data) <= secret.MaxValueLen {
			_ = f.Chmod(0o640) // the operation's next jobs (other uids, the same group) read it; no one else sees it
			values = append(values, bytes.TrimSpace(data))
			written[a.Name] = true
		}
		f.Close()
	}
	return values, written
}

// redact hides the values of the secret artifacts a job wrote (and their
// encodings) in what it printed; with a secret store every other secret
// of the organization is masked too (diagnostics).
func redact(out []byte, secrets [][]byte) []byte {
	return secret.NewRedactor(secrets).Bytes(out)
}

// sandbox is the operation's working directory for jobs and probes.
func (l *loop) sandbox() string {
	l.dirs.Do(l.makeDirs)
	return filepath.Join(l.e.cfg.JobDir, "sandbox", l.opID)
}

// outputs is the directory where the operation's jobs write artifacts
// and read those of the jobs upstream (in the job directory).
func (l *loop) outputs() string {
	l.dirs.Do(l.makeDirs)
	return filepath.Join(l.e.cfg.JobDir, "outputs", l.opID)
}

// makeDirs creates the operation's directories once.
func (l *loop) makeDirs() {
	for _, d := range []string{filepath.Join(l.e.cfg.JobDir, "sandbox", l.opID), filepath.Join(l.e.cfg.JobDir, "outputs", l.opID)} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			l.e.cfg.Log.Warn("operation directory not made", "operation", l.opID, "err", err.Error())
		}
	}
}

// scalar reports whether v is a string, number or boolean: what an
// environment variable can carry as it is.
func scalar(v any) bool {
	switch v.(type) {
	case string, bool, float64, int, int64:
		return true
	}
	return false
}

// jobEnv passes parameters, the outputs directory and the files of the
// artifacts a job consumes as environment variables, never into the script:
// CAPSTAN_PARAM_<NAME>, CAPSTAN_OUTPUTS, CAPSTAN_ARTIFACT_<NAME> (a path);
// attempt adds CAPSTAN_DESIRED_<FIELD>, the desired state's scalar fields,
// and CAPSTAN_RESOURCE_NAME, the name of the resource the operation acts on.
func (l *loop) jobEnv(n *capstan.PlanNode) map[string]string {
	env := map[string]string{"CAPSTAN_NODE": n.ID, "CAPSTAN_OPERATION": capstan.OperationGID(l.opID), "CAPSTAN_OUTPUTS": l.outputs()}
	if n.Job != nil {
		for _, a := range n.Job.Inputs.Artifacts {
			env["CAPSTAN_ARTIFACT_"+envName(a)] = filepath.Join(l.outputs(), a)
		}
	}
	for k, v := range n.JobParameters() {
		env["CAPSTAN_PARAM_"+envName(k)] = fmt.Sprint(v)
	}
	return env
}

func envName(k string) string { return job.EnvName(k) }
