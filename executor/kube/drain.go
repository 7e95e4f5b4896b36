package kube

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan"
)

// ErrKindBlocked is the error kind of a drain a PodDisruptionBudget kept
// from evicting a pod until the step's timeout: the step asks for
// attention rather than deleting the pod around the budget.
const ErrKindBlocked = "blocked"

// evictionRetry is how long a drain waits before it asks again to evict
// a pod a PodDisruptionBudget protects (the API answers 429 and tells
// nobody when the budget allows it: kubectl drain asks again too).
const evictionRetry = 2 * time.Second

// Drained is what a drain did to a node, as its evidence records it.
type Drained struct {
	Node string `json:"node"`
	// Cordoned: the node takes no new pod (spec.unschedulable, applied
	// under Capstan's field manager).
	Cordoned bool `json:"cordoned"`
	// Evicted are the pods evicted (namespace/name), each gone before the
	// drain ended; Skipped the pods a drain leaves (a DaemonSet's, a
	// static pod's mirror, a pod that has ended), with why.
	Evicted []string `json:"evicted,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
	// Blocked says which pods a PodDisruptionBudget still protected when
	// the step's time ran out.
	Blocked []string `json:"blocked,omitempty"`
	// Removed: the Node object was deleted once drained (a step with
	// delete: true).
	Removed bool `json:"removed,omitempty"`
}

// Drain cordons node and evicts its pods through the eviction API, which
// honours PodDisruptionBudgets: a pod a budget protects is asked for
// again until the budget allows it, or ctx (the step's timeout) ends, and
// then the drain fails with ErrKindBlocked. It never deletes a pod. It
// waits on a watch until each evicted pod is gone.
func (c *Client) Drain(ctx context.Context, node string) (Drained, error) {
	d := Drained{Node: node}
	cordon, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": node}, "spec": map[string]any{"unschedulable": true}})
	if err != nil {
		return d, err
	}
	if _, err := c.Dynamic.Resource(nodes).Patch(ctx, node, types.ApplyPatchType, cordon, metav1.PatchOptions{FieldManager: FieldManager, Force: ptr(true)}); err != nil {
		return d, Classify(c.Server, "cordoning node "+node, err)
	}
	d.Cordoned = true
	podsAPI := c.Dynamic.Resource(pods)
	list, err := podsAPI.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return d, Classify(c.Server, "listing the pods on node "+node, err)
	}
	var todo []*unstructured.Unstructured
	for i := range list.Items {
		pod := &list.Items[i]
		if why := leftOnDrain(pod); why != "" {
			d.Skipped = append(d.Skipped, ref(pod)+" ("+why+")")
			continue
		}
		todo = append(todo, pod)
	}
	var budget string // what the last budget that refused an eviction said
	for len(todo) > 0 {
		var blocked []*unstructured.Unstructured
		for _, pod := range todo {
			err := c.evict(ctx, pod)
			switch {
			case err == nil || apierrors.IsNotFound(err):
				d.Evicted = append(d.Evicted, ref(pod))
			case apierrors.IsTooManyRequests(err):
				blocked, budget = append(blocked, pod), apiMessage(err)
			case ctx.Err() != nil && budget != "":
				// The step's time ran out while a pod a budget kept was
				// asked for again: the request never got an answer, and
				// the budget is still what kept it.
				blocked = append(blocked, pod)
			default:
				return d, Classify(c.Server, "evicting pod "+ref(pod), err)
			}
		}
		todo = blocked
		if len(todo) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			for _, pod := range todo {
				d.Blocked = append(d.Blocked, ref(pod))
			}
			sort.Strings(d.Blocked)
			return d, &Error{Kind: ErrKindBlocked, Err: capstan.Errorf(capstan.EUNAVAILABLE,
				"cluster %s: draining node %s: a PodDisruptionBudget kept %s from eviction until the step's timeout (%s): nothing was deleted around it",
				c.Server, node, strings.Join(d.Blocked, ", "), budget)}
		case <-time.After(evictionRetry):
		}
	}
	for _, p := range d.Evicted {
		ns, name, _ := strings.Cut(p, "/")
		live, err := podsAPI.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return d, Classify(c.Server, "reading evicted pod "+p, err)
		}
		if err := waitGone(ctx, podsAPI.Namespace(ns), live); err != nil {
			return d, Classify(c.Server, "waiting for evicted pod "+p+" to go", err)
		}
	}
	sort.Strings(d.Evicted)
	return d, nil
}

// evict asks the eviction API to evict pod (its uid as a precondition:
// the very pod listed, not one of the same name made since).
func (c *Client) evict(ctx context.Context, pod *unstructured.Unstructured) error {
	uid := string(pod.GetUID())
	eviction := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "policy/v1", "kind": "Eviction",
		"metadata":      map[string]any{"name": pod.GetName(), "namespace": pod.GetNamespace()},
		"deleteOptions": map[string]any{"preconditions": map[string]any{"uid": uid}},
	}}
	_, err := c.Dynamic.Resource(pods).Namespace(pod.GetNamespace()).Create(ctx, eviction, metav1.CreateOptions{}, "eviction")
	return err
}

// leftOnDrain says why a drain leaves pod where it is ("": it evicts it).
func leftOnDrain(pod *unstructured.Unstructured) string {
	if _, mirror := pod.GetAnnotations()["kubernetes.io/config.mirror"]; mirror {
		return "a static pod's mirror"
	}
	for _, o := range pod.GetOwnerReferences() {
		if o.Kind == "DaemonSet" {
			return "a DaemonSet's, which runs on every node"
		}
	}
	if phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase"); phase == "Succeeded" || phase == "Failed" {
		return "ended: " + phase
	}
	if pod.GetDeletionTimestamp() != nil {
		return "already going"
	}
	return ""
}

func ref(obj *unstructured.Unstructured) string { return obj.GetNamespace() + "/" + obj.GetName() }

func ptr[T any](v T) *T { return &v }
