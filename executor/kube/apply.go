package kube

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// Applied is what one apply did to one object, as evidence records it.
type Applied struct {
	APIVersion string `json:"api_version"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
	// ResourceVersion and Generation are the object's after the apply.
	ResourceVersion string `json:"resource_version,omitempty"`
	Generation      int64  `json:"generation,omitempty"`
	// Action: created, configured, unchanged (a server-side dry run
	// found nothing to change, so nothing was written: what a step
	// re-run after a crash finds), deleted or absent.
	Action string `json:"action"`
	// Changes are the fields the apply changed (created: none listed).
	Changes []Change `json:"changes,omitempty"`
	// Ready is the last status the wait observed.
	Ready string `json:"ready,omitempty"`
	// object is what was applied (AppliedRecord): the evidence keeps it,
	// for drift to compare with and a repair to apply again.
	object map[string]any
}

// Ref names the object: Kind namespace/name.
func (a Applied) Ref() string {
	if a.Namespace == "" {
		return a.Kind + " " + a.Name
	}
	return a.Kind + " " + a.Namespace + "/" + a.Name
}

// target is where an object lives in the API.
type target struct {
	api        dynamic.ResourceInterface
	namespaced bool
}

func (c *Client) targetOf(obj *unstructured.Unstructured, namespace string) (target, error) {
	m, err := c.resource(obj.GroupVersionKind())
	if err != nil {
		return target{}, err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		obj.SetNamespace("")
		return target{api: c.Dynamic.Resource(m.Resource)}, nil
	}
	if obj.GetNamespace() == "" {
		if namespace == "" {
			namespace = "default"
		}
		obj.SetNamespace(namespace)
	}
	return target{api: c.Dynamic.Resource(m.Resource).Namespace(obj.GetNamespace()), namespaced: true}, nil
}

// Apply applies obj under FieldManager (force: take over other managers'
// fields). It first asks the server what the apply would make (a dry
// run) and writes only when that differs from the live object: a step
// re-run after a crash reads the object and finds it applied, rather
// than applying it blindly again.
func (c *Client) Apply(ctx context.Context, obj *unstructured.Unstructured, namespace string, force bool) (Applied, error) {
	t, err := c.targetOf(obj, namespace)
	if err != nil {
		return Applied{}, err
	}
	a := Applied{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), object: AppliedRecord(obj)}
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: force}
	var live *unstructured.Unstructured
	err = settled(ctx, func() (err error) {
		live, err = t.api.Get(ctx, obj.GetName(), metav1.GetOptions{})
		return err
	})
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return a, Classify(c.Server, "reading "+a.Ref(), err)
	}
	if live != nil {
		dry := opts
		dry.DryRun = []string{metav1.DryRunAll}
		would, err := t.api.Apply(ctx, obj.GetName(), obj, dry)
		if err != nil {
			return a, Classify(c.Server, "applying "+a.Ref()+" (dry run)", err)
		}
		a.Changes = masked(obj, Diff(live.Object, would.Object))
		if len(a.Changes) == 0 {
			a.Action = "unchanged"
			a.record(live)
			return a, nil
		}
	}
	out, err := t.api.Apply(ctx, obj.GetName(), obj, opts)
	if err != nil {
		return a, Classify(c.Server, "applying "+a.Ref(), err)
	}
	a.Action = "configured"
	if live == nil {
		a.Action = "created"
	}
	a.record(out)
	return a, nil
}

// Preview is what applying obj would change, from a server-side dry
// run: the plan preview's per-object diff. Nothing is written.
func (c *Client) Preview(ctx context.Context, obj *unstructured.Unstructured, namespace string, force bool) (Applied, error) {
	t, err := c.targetOf(obj, namespace)
	if err != nil {
		return Applied{}, err
	}
	a := Applied{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
	live, err := t.api.Get(ctx, obj.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		live = &unstructured.Unstructured{Object: map[string]any{}}
		a.Action = "created"
	case err != nil:
		return a, Classify(c.Server, "reading "+a.Ref(), err)
	default:
		a.Action = "configured"
		a.record(live)
	}
	would, err := t.api.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: force, DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return a, Classify(c.Server, "applying "+a.Ref()+" (dry run)", err)
	}
	if a.Action == "created" {
		a.Changes = masked(obj, Diff(nil, obj.Object)) // the manifest's fields, not every default the server adds
		return a, nil
	}
	if a.Changes = masked(obj, Diff(live.Object, would.Object)); len(a.Changes) == 0 {
		a.Action = "unchanged"
	}
	return a, nil
}

// Delete deletes obj (its dependents in the foreground) and returns
// once it is gone.
func (c *Client) Delete(ctx context.Context, obj *unstructured.Unstructured, namespace string) (Applied, error) {
	t, err := c.targetOf(obj, namespace)
	if err != nil {
		return Applied{}, err
	}
	a := Applied{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), Action: "deleted"}
	live, err := t.api.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		a.Action = "absent"
		return a, nil
	}
	if err != nil {
		return a, Classify(c.Server, "reading "+a.Ref(), err)
	}
	a.record(live)
	policy := metav1.DeletePropagationForeground
	uid := live.GetUID()
	err = t.api.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return a, Classify(c.Server, "deleting "+a.Ref(), err)
	}
	if err := waitGone(ctx, t.api, live); err != nil {
		return a, Classify(c.Server, fmt.Sprintf("waiting for %s to go", a.Ref()), err)
	}
	return a, nil
}

// masked hides a Secret's values in its changes: a step's output and
// evidence say which keys changed, never to what.
func masked(obj *unstructured.Unstructured, changes []Change) []Change {
	if obj.GetKind() != "Secret" || obj.GetAPIVersion() != "v1" {
		return changes
	}
	for i, c := range changes {
		if strings.HasPrefix(c.Path, "data.") || strings.HasPrefix(c.Path, "stringData.") || c.Path == "data" || c.Path == "stringData" {
			if c.Old != nil {
				changes[i].Old = secretMask
			}
			if c.New != nil {
				changes[i].New = secretMask
			}
		}
	}
	return changes
}

// secretMask stands for a Secret's value in a change.
const secretMask = "(secret)"

func (a *Applied) record(obj *unstructured.Unstructured) {
	a.UID = string(obj.GetUID())
	a.ResourceVersion = obj.GetResourceVersion()
	a.Generation = obj.GetGeneration()
}
