package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// Readiness is what an object's status says of it.
type Readiness struct {
	// Done: the object is ready (rolled out, available, complete, bound).
	// Failed: it never will be without a change (a Job failed, a rollout
	// past its progress deadline).
	Done, Failed bool
	// Status says what was observed, in words: "3/3 updated, 3
	// available" or "Bound".
	Status string
	// ResourceVersion is the version of the object observed.
	ResourceVersion string
}

// ReadinessOf decides whether an object is ready, by kind: a Deployment
// rolled out (its controller saw the latest generation, every replica
// updated and available, no old one left), a StatefulSet or DaemonSet
// likewise, a Job complete, a PersistentVolumeClaim bound. Any other
// object is ready once it exists.
func ReadinessOf(obj *unstructured.Unstructured) Readiness {
	gen := obj.GetGeneration()
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	status := func(f ...string) int64 {
		v, _, _ := unstructured.NestedInt64(obj.Object, append([]string{"status"}, f...)...)
		return v
	}
	switch obj.GetKind() {
	case "Deployment":
		want := int64(1)
		if v, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); found {
			want = v
		}
		updated, total, available := status("updatedReplicas"), status("replicas"), status("availableReplicas")
		r := Readiness{Status: fmt.Sprintf("%d/%d updated, %d available, %d in all (generation %d observed %d)", updated, want, available, total, gen, observed)}
		if c := condition(obj, "Progressing"); c != nil && c.status == "False" && c.reason == "ProgressDeadlineExceeded" {
			r.Failed, r.Status = true, "rollout past its progress deadline: "+c.message+" ("+r.Status+")"
			return r
		}
		r.Done = observed >= gen && updated == want && total == want && available == want
		return r
	case "StatefulSet":
		want := int64(1)
		if v, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); found {
			want = v
		}
		ready, updated := status("readyReplicas"), status("updatedReplicas")
		r := Readiness{Status: fmt.Sprintf("%d/%d ready, %d updated (generation %d observed %d)", ready, want, updated, gen, observed)}
		r.Done = observed >= gen && ready == want && updated == want
		return r
	case "DaemonSet":
		desired, available, updated := status("desiredNumberScheduled"), status("numberAvailable"), status("updatedNumberScheduled")
		r := Readiness{Status: fmt.Sprintf("%d/%d available, %d updated (generation %d observed %d)", available, desired, updated, gen, observed)}
		r.Done = observed >= gen && available == desired && updated == desired
		return r
	case "Job":
		if c := condition(obj, "Failed"); c != nil && c.status == "True" {
			return Readiness{Failed: true, Status: "failed: " + c.reason + ": " + c.message}
		}
		if c := condition(obj, "Complete"); c != nil && c.status == "True" {
			return Readiness{Done: true, Status: "complete"}
		}
		return Readiness{Status: fmt.Sprintf("%d active, %d succeeded, %d failed", status("active"), status("succeeded"), status("failed"))}
	case "Namespace":
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		return Readiness{Done: phase == "Active", Failed: phase == "Terminating", Status: "phase " + or(phase, "unknown")}
	case "PersistentVolumeClaim":
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		return Readiness{Done: phase == "Bound", Failed: phase == "Lost", Status: "phase " + or(phase, "Pending")}
	}
	return Readiness{Done: true, Status: "exists"}
}

type cond struct{ status, reason, message string }

func condition(obj *unstructured.Unstructured, kind string) *cond {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, item := range list {
		m, _ := item.(map[string]any)
		if m["type"] == kind {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return &cond{status: s, reason: r, message: msg}
		}
	}
	return nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// WaitReady waits on a watch until the object is ready, failed, or ctx
// ends (the step's timeout), and returns the last status it observed. A
// watch the server closes, or one too old to resume (410 Gone), is listed
// and watched again: the informer under watchtools.UntilWithSync does
// that.
func (c *Client) WaitReady(ctx context.Context, obj *unstructured.Unstructured, namespace string) (Readiness, error) {
	if !waited[obj.GetKind()] {
		return Readiness{Done: true, Status: "exists"}, nil // applied, so it exists: nothing to watch
	}
	t, err := c.targetOf(obj, namespace)
	if err != nil {
		return Readiness{}, err
	}
	// The informer below retries what the API refuses until the step's
	// timeout; a refusal that will not pass (RBAC) is found first.
	if err := settled(ctx, func() error { return canWatch(ctx, t.api, obj.GetName()) }); err != nil {
		return Readiness{}, Classify(c.Server, "watching "+obj.GetKind()+" "+obj.GetName(), err)
	}
	var (
		mu   sync.Mutex
		last = Readiness{Status: "not observed yet"}
	)
	_, err = watchtools.UntilWithSync(ctx, listWatch(t.api, obj.GetName()), &unstructured.Unstructured{}, nil,
		func(ev watch.Event) (bool, error) {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				return false, nil
			}
			if ev.Type == watch.Deleted {
				mu.Lock()
				last = Readiness{Failed: true, Status: "deleted while Capstan waited for it"}
				mu.Unlock()
				return true, nil
			}
			r := ReadinessOf(u)
			r.ResourceVersion = u.GetResourceVersion()
			mu.Lock()
			last = r
			mu.Unlock()
			return r.Done || r.Failed, nil
		})
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		if errors.Is(err, watchtools.ErrWatchClosed) || ctx.Err() != nil || strings.Contains(err.Error(), "timed out") {
			return last, &Error{Kind: ErrKindTimeout, Err: fmt.Errorf("cluster %s: %s %s was not ready before the step's timeout; last observed: %s", c.Server, obj.GetKind(), obj.GetName(), last.Status)}
		}
		return last, Classify(c.Server, "watching "+obj.GetKind()+" "+obj.GetName(), err)
	}
	if last.Failed {
		return last, &Error{Kind: ErrKindFailed, Err: fmt.Errorf("cluster %s: %s %s: %s", c.Server, obj.GetKind(), obj.GetName(), last.Status)}
	}
	return last, nil
}

// waited are the kinds whose readiness is more than existing.
var waited = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "Job": true, "PersistentVolumeClaim": true, "Namespace": true}

// canWatch lists and opens a watch of the one object, and closes it: a
// refusal of either is the caller's to report.
func canWatch(ctx context.Context, api dynamic.ResourceInterface, name string) error {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	list, err := api.List(ctx, metav1.ListOptions{FieldSelector: sel, Limit: 1})
	if err != nil {
		return err
	}
	w, err := api.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		return err
	}
	w.Stop()
	return nil
}

// listWatch lists and watches the one object named name.
func listWatch(api dynamic.ResourceInterface, name string) cache.ListerWatcher {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = sel
			return api.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = sel
			return api.Watch(ctx, opts)
		},
	}
}

// waitGone waits on a watch until live (that object, by uid) is gone.
func waitGone(ctx context.Context, api dynamic.ResourceInterface, live *unstructured.Unstructured) error {
	_, err := watchtools.UntilWithSync(ctx, listWatch(api, live.GetName()), &unstructured.Unstructured{},
		func(store cache.Store) (bool, error) {
			for _, item := range store.List() {
				if u, ok := item.(*unstructured.Unstructured); ok && u.GetUID() == live.GetUID() {
					return false, nil
				}
			}
			return true, nil
		},
		func(ev watch.Event) (bool, error) {
			u, ok := ev.Object.(*unstructured.Unstructured)
			return ok && ev.Type == watch.Deleted && u.GetUID() == live.GetUID(), nil
		})
	return err
}
