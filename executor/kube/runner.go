package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// Runner runs `kubernetes` jobs: it applies the job's manifests to the
// cluster its target names, in order, and waits until each is ready —
// or, for a compensation (delete), deletes them in reverse order and
// waits until each is gone. All of it within the job's timeout.
type Runner struct {
	// Dial dials the API server: the egress allow-list's.
	Dial Dialer
}

// Run runs one attempt. Its output is one JSON line per object (what was
// done to it, its uid, resourceVersion and generation, the changed fields
// and the last status observed), and its evidence one item per object.
func (r Runner) Run(ctx context.Context, j job.Job) job.Result {
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	// A replica stalled past its lease does no more once it runs again:
	// the new owner runs the step.
	ctx, stop := job.WithinDeadline(ctx, j.Deadline)
	defer stop()
	if j.Target == nil || j.Target.Cluster == nil {
		return job.Result{ExitCode: -1, ErrKind: job.ErrKindTarget, Err: fmt.Errorf("job %s: target %q is not a cluster (a kubernetes.cluster resource bound to the node)", j.NodeID, j.Spec.Target)}
	}
	objs, err := Objects(j.Spec.Manifests, Params(j.Env))
	if err != nil {
		return job.Result{ExitCode: -1, ErrKind: ErrKindInvalid, Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
	}
	client, err := Connect(j.Target.Cluster, r.Dial)
	if err != nil {
		return failed(j, nil, err)
	}
	var done []Applied
	if j.Spec.Delete {
		for i := len(objs) - 1; i >= 0; i-- {
			if job.Closed(j.Deadline) {
				return windowClosed(j, done)
			}
			a, err := client.Delete(ctx, objs[i], j.Spec.Namespace)
			done = append(done, a)
			if err != nil {
				return failed(j, done, err)
			}
		}
		return succeeded(j, done)
	}
	for _, obj := range objs {
		if job.Closed(j.Deadline) {
			return windowClosed(j, done)
		}
		a, err := client.Apply(ctx, obj, j.Spec.Namespace, j.Spec.Force)
		done = append(done, a)
		if err != nil {
			return failed(j, done, err)
		}
	}
	for i, obj := range objs {
		ready, err := client.WaitReady(ctx, obj, j.Spec.Namespace)
		done[i].Ready = ready.Status
		if ready.ResourceVersion != "" {
			done[i].ResourceVersion = ready.ResourceVersion // the version found ready
		}
		if err != nil {
			return failed(j, done, err)
		}
	}
	return succeeded(j, done)
}

// windowClosed is the result of a step whose executor's lease ran out:
// nothing more was applied.
func windowClosed(j job.Job, done []Applied) job.Result {
	return job.Result{ExitCode: -1, Output: report(done), ErrKind: job.ErrKindLease,
		Err: fmt.Errorf("job %s: the executor's lease ran out before it was renewed: nothing more applied", j.NodeID)}
}

func succeeded(j job.Job, done []Applied) job.Result {
	return job.Result{ExitCode: 0, Output: report(done), Evidence: evidence(j, done, capstan.EvidencePassed)}
}

func failed(j job.Job, done []Applied, err error) job.Result {
	kind := ErrKindUnavailable
	var ke *Error
	if errors.As(err, &ke) {
		kind = ke.Kind
	}
	out := report(done)
	out = append(out, []byte("error: "+err.Error()+"\n")...)
	return job.Result{ExitCode: -1, Output: out, ErrKind: kind, Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
}

// report is one JSON line per object.
func report(done []Applied) []byte {
	var b strings.Builder
	for _, a := range done {
		line, _ := json.Marshal(a)
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// evidence records each object the step applied (or deleted), as the
// cluster answered: its uid and resourceVersion prove which object, at
// which version, the step left behind.
func evidence(j job.Job, done []Applied, result string) []capstan.Evidence {
	now := time.Now().UTC()
	out := make([]capstan.Evidence, 0, len(done))
	for _, a := range done {
		source := map[string]any{"type": "kubernetes", "cluster": j.Target.Cluster.Server, "target": j.Target.Resource,
			"api_version": a.APIVersion, "kind": a.Kind, "name": a.Name, "action": a.Action, "field_manager": FieldManager}
		for k, v := range map[string]string{"namespace": a.Namespace, "uid": a.UID, "resource_version": a.ResourceVersion, "ready": a.Ready} {
			if v != "" {
				source[k] = v
			}
		}
		if a.Generation != 0 {
			source["generation"] = a.Generation
		}
		item := strings.ToLower(a.Kind) + "-" + a.Name + "-" + a.Action
		out = append(out, capstan.Evidence{OperationID: j.OperationID, ProducedBy: j.NodeID, Item: item, Result: result, Source: source, ObservedAt: now})
	}
	return out
}
