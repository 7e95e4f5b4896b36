package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/secret"
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
	if j.Spec.Drain != "" {
		return r.drain(ctx, j)
	}
	objs, err := r.objects(j)
	if err != nil {
		return job.Result{ExitCode: -1, ErrKind: ErrKindInvalid, Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
	}
	ns, err := FillRef(capstan.ObjectRef{Namespace: j.Spec.Namespace}, Params(j.Env))
	if err != nil {
		return job.Result{ExitCode: -1, ErrKind: ErrKindInvalid, Err: fmt.Errorf("job %s: namespace: %w", j.NodeID, err)}
	}
	namespace := ns.Namespace
	if errs := validation.IsDNS1123Label(namespace); namespace != "" && len(errs) > 0 {
		return job.Result{ExitCode: -1, ErrKind: ErrKindInvalid, Err: capstan.Errorf(capstan.EINVALID, "job %s: namespace %q: %s", j.NodeID, namespace, strings.Join(errs, "; "))}
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
			a, err := client.Delete(ctx, objs[i], namespace)
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
		a, err := client.Apply(ctx, obj, namespace, j.Spec.Force)
		done = append(done, a)
		if err != nil {
			return failed(j, done, err)
		}
	}
	for i, obj := range objs {
		ready, err := client.WaitReady(ctx, obj, namespace)
		done[i].Ready = ready.Status
		if ready.ResourceVersion != "" {
			done[i].ResourceVersion = ready.ResourceVersion // the version found ready
		}
		if err != nil {
			return notReady(ctx, j, client, obj, namespace, done, err)
		}
	}
	return succeeded(j, done)
}

// drain runs a drain step: the node its spec names (a placeholder
// filled with the job's parameters) cordoned and drained (Client.Drain).
// Its output is the drain as one JSON line, and its evidence one item.
func (r Runner) drain(ctx context.Context, j job.Job) job.Result {
	ref, err := FillRef(capstan.ObjectRef{Name: j.Spec.Drain}, Params(j.Env))
	if err == nil {
		if errs := validation.IsDNS1123Subdomain(ref.Name); len(errs) > 0 {
			err = fmt.Errorf("node %q: %s", ref.Name, strings.Join(errs, "; "))
		}
	}
	if err != nil {
		return job.Result{ExitCode: -1, ErrKind: ErrKindInvalid, Err: capstan.Errorf(capstan.EINVALID, "job %s: drain: %v", j.NodeID, err)}
	}
	client, err := Connect(j.Target.Cluster, r.Dial)
	if err != nil {
		return failed(j, nil, err)
	}
	d, err := client.Drain(ctx, ref.Name)
	if err == nil && j.Spec.Delete {
		// Drained, the node leaves the cluster: its Node object deleted,
		// and waited for until it is gone.
		node := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": ref.Name}}}
		var a Applied
		a, err = client.Delete(ctx, node, "")
		d.Removed = err == nil && (a.Action == "deleted" || a.Action == "absent")
	}
	line, _ := json.Marshal(d)
	source := map[string]any{"type": "kubernetes", "cluster": j.Target.Cluster.Server, "target": j.Target.Resource, "node": d.Node, "cordoned": d.Cordoned,
		"evicted": orEmpty(d.Evicted), "skipped": orEmpty(d.Skipped), "removed": d.Removed}
	result := capstan.EvidencePassed
	if len(d.Blocked) > 0 {
		source["blocked"], result = d.Blocked, capstan.EvidenceFailed
	}
	ev := []capstan.Evidence{{OperationID: j.OperationID, ProducedBy: j.NodeID, Item: "node-" + d.Node + "-drained", Result: result, Source: source, ObservedAt: time.Now().UTC()}}
	if err != nil {
		res := failed(j, nil, err)
		res.Output = append(append(line, '\n'), res.Output...)
		if d.Cordoned {
			res.Evidence = ev // what it did before it stopped
		}
		return res
	}
	return job.Result{ExitCode: 0, Output: append(line, '\n'), Evidence: ev}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// objects are what the job applies: its manifests, filled with its
// parameters, or for a reapply the objects the resource's operations
// applied (Reapplied).
func (r Runner) objects(j job.Job) ([]*unstructured.Unstructured, error) {
	if j.Spec.Reapply {
		return Reapplied(j.Desired[capstan.AppliedObjectsKey])
	}
	return Objects(j.Spec.Manifests, Params(j.Env))
}

// Reapplied reads the objects a resource's operations applied (its
// desired state's applied_objects) to apply them again. A Secret is left
// out, for its values were never recorded (and applying it without them
// would remove them); an object holding a masked value is refused, for
// applying it would write the mask. None at all is refused: there is
// nothing to repair from.
func Reapplied(recorded any) ([]*unstructured.Unstructured, error) {
	list, _ := recorded.([]any)
	var out []*unstructured.Unstructured
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, capstan.Errorf(capstan.EINVALID, "the recorded applied objects hold a %T, not an object", item)
		}
		copied, err := jsonCopy(m)
		if err != nil {
			return nil, capstan.Errorf(capstan.EINVALID, "a recorded applied object: %v", err)
		}
		obj := &unstructured.Unstructured{Object: copied}
		if isSecret(m) {
			continue
		}
		if masked := holdsMask(m); masked {
			return nil, capstan.Errorf(capstan.EINVALID, "%s %s was applied with a secret value, which was never recorded: run its scenario again rather than a reapply", obj.GetKind(), obj.GetName())
		}
		if err := checkObject(obj); err != nil {
			return nil, capstan.Errorf(capstan.EINVALID, "a recorded applied object: %v", err)
		}
		out = append(out, obj)
	}
	if len(out) == 0 {
		return nil, capstan.Errorf(capstan.EINVALID, "the resource records no applied object to apply again")
	}
	return out, nil
}

// holdsMask reports whether a value holds a masked secret.
func holdsMask(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for _, item := range t {
			if holdsMask(item) {
				return true
			}
		}
	case []any:
		for _, item := range t {
			if holdsMask(item) {
				return true
			}
		}
	case string:
		return t == secretMask || strings.Contains(t, secret.Mask)
	}
	return false
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

// whyBudget bounds the reads that say why a workload is not ready,
// after the wait's own time ran out.
const whyBudget = 10 * time.Second

// notReady is the result of a step whose object did not become ready:
// the wait's error with why (its pods not ready and their reasons, read
// from the cluster: what an analyzer reads), and a failed evidence item
// with the pods per node and their warning events.
func notReady(ctx context.Context, j job.Job, client *Client, obj *unstructured.Unstructured, namespace string, done []Applied, err error) job.Result {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), whyBudget) // read-only: the step's own time has run out
	defer cancel()
	source, why := client.WhyNotReady(ctx, obj, namespace)
	if why != "" {
		var ke *Error
		if errors.As(err, &ke) {
			err = &Error{Kind: ke.Kind, Err: fmt.Errorf("%w; %s", ke.Err, why)}
		}
	}
	res := failed(j, done, err)
	if source != nil {
		source["type"], source["cluster"], source["target"] = "kubernetes", j.Target.Cluster.Server, j.Target.Resource
		source["api_version"], source["kind"], source["namespace"], source["name"] = obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName()
		res.Evidence = []capstan.Evidence{{OperationID: j.OperationID, ProducedBy: j.NodeID, Item: strings.ToLower(obj.GetKind()) + "-" + obj.GetName() + "-not-ready",
			Result: capstan.EvidenceFailed, Source: source, ObservedAt: time.Now().UTC()}}
	}
	return res
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
		if a.object != nil {
			source[capstan.AppliedSource] = a.object
		}
		item := strings.ToLower(a.Kind) + "-" + a.Name + "-" + a.Action
		out = append(out, capstan.Evidence{OperationID: j.OperationID, ProducedBy: j.NodeID, Item: item, Result: result, Source: source, ObservedAt: now})
	}
	return out
}
