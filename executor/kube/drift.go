package kube

import (
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// maxDrift bounds the drifted fields one drift probe records.
const maxDrift = 100

var nodes = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// Drift is the drift probe (a kubernetes probe with drift: true): it
// reads, on the target cluster, every object the resource's operations
// applied (applied: its desired state's applied_objects) and compares
// each with what was applied (Compare): a missing object, or a field
// with another value, is drift, with the manager that changed it. It
// lists each kind once per namespace rather than reading each object
// (Source "requests" counts the API requests). It fails when a present
// object is not ready for its kind (ReadinessOf), or a workload has pods
// on a node that is not Ready: what makes the resource degraded.
func (p Probe) Drift(ctx context.Context, pr capstan.Probe, t *job.Target, applied any) (string, map[string]any, []byte) {
	source := map[string]any{}
	if t.Cluster == nil {
		source["note"] = "a drift probe needs a cluster target"
		return capstan.EvidenceFailed, source, nil
	}
	objs, _ := applied.([]any)
	source["objects"] = len(objs)
	if len(objs) == 0 {
		source["note"] = "the resource records no applied object: nothing to compare"
		return capstan.EvidenceInconclusive, source, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	client, err := Connect(t.Cluster, p.Dial)
	if err != nil {
		return noted(source, err)
	}
	d := &drifted{client: client, live: map[string]map[string]*unstructured.Unstructured{}}
	var drift []any // of map[string]any: what a redactor masks (secret.Redactor.Value)
	var notReady []string
	for _, item := range objs {
		want, _ := item.(map[string]any)
		obj := &unstructured.Unstructured{Object: want}
		live, err := d.get(ctx, obj)
		if err != nil {
			source["requests"] = d.requests
			return noted(source, err)
		}
		ref := Applied{Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}.Ref()
		if live == nil {
			drift = append(drift, map[string]any{"field": ref, "desired": "present", "observed": "missing"})
			continue
		}
		for _, ch := range Compare(want, live.Object) {
			drift = append(drift, map[string]any{"field": ref + " " + ch.Path, "desired": ch.Desired, "observed": ch.Observed, "changed_by": ch.ChangedBy})
		}
		if r := ReadinessOf(live); !r.Done {
			notReady = append(notReady, ref+": "+r.Status)
		}
		notReady = append(notReady, d.onNotReadyNodes(ctx, live, ref)...)
	}
	source["requests"] = d.requests
	if len(drift) > maxDrift {
		source["drift_left_out"] = len(drift) - maxDrift
		drift = drift[:maxDrift]
	}
	if len(drift) > 0 {
		source["drift"] = drift
	}
	if len(notReady) > 0 {
		sort.Strings(notReady)
		source["not_ready"] = notReady
		return capstan.EvidenceFailed, source, nil
	}
	return capstan.EvidencePassed, source, nil
}

// drifted is one drift probe's reads: each kind listed once per
// namespace, the nodes once.
type drifted struct {
	client   *Client
	live     map[string]map[string]*unstructured.Unstructured // by kind and namespace, then name
	nodes    map[string]string                                // not-ready reason by node name ("": Ready)
	requests int
}

// get is the live object obj names, nil when there is none.
func (d *drifted) get(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t, err := d.client.targetOf(obj, obj.GetNamespace())
	if err != nil {
		return nil, err
	}
	group := obj.GroupVersionKind().GroupKind().String() + "|" + obj.GetNamespace()
	byName, listed := d.live[group]
	if !listed {
		byName = map[string]*unstructured.Unstructured{}
		opts := metav1.ListOptions{Limit: 500}
		for {
			var list *unstructured.UnstructuredList
			err := settled(ctx, func() (err error) {
				d.requests++
				list, err = t.api.List(ctx, opts)
				return err
			})
			if err != nil {
				return nil, Classify(d.client.Server, "listing "+obj.GetKind()+" objects", err)
			}
			for i := range list.Items {
				byName[list.Items[i].GetName()] = &list.Items[i]
			}
			if opts.Continue = list.GetContinue(); opts.Continue == "" {
				break
			}
		}
		d.live[group] = byName
	}
	return byName[obj.GetName()], nil
}

// onNotReadyNodes says which of a workload's pods run on a node that is
// not Ready (none for other kinds, or when the nodes cannot be read).
func (d *drifted) onNotReadyNodes(ctx context.Context, live *unstructured.Unstructured, ref string) []string {
	sel := workloadSelector(live)
	if sel == nil {
		return nil
	}
	if d.nodes == nil {
		d.nodes = map[string]string{}
		d.requests++
		list, err := d.client.Dynamic.Resource(nodes).List(ctx, metav1.ListOptions{Limit: 1000})
		if err != nil {
			return nil // the nodes are not the pack's to read: the workload's own readiness still says
		}
		for _, n := range list.Items {
			if c := condition(&n, "Ready"); c == nil || c.status != "True" {
				reason := "no Ready condition"
				if c != nil {
					reason = fmt.Sprintf("Ready=%s (%s)", c.status, or(c.reason, "no reason"))
				}
				d.nodes[n.GetName()] = reason
			}
		}
	}
	if len(d.nodes) == 0 {
		return nil
	}
	d.requests++
	list, err := d.client.Dynamic.Resource(pods).Namespace(live.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: sel.String(), Limit: 500})
	if err != nil {
		return []string{ref + ": listing its pods: " + apiMessage(err)}
	}
	var out []string
	for _, pod := range list.Items {
		node, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName")
		if reason, bad := d.nodes[node]; bad && node != "" {
			out = append(out, fmt.Sprintf("%s: pod %s is on node %s, which is not Ready: %s", ref, pod.GetName(), node, reason))
		}
	}
	return out
}
