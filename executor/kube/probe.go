package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// ProbeTimeout bounds one probe's reads.
const ProbeTimeout = 30 * time.Second

// maxEvents is how many of an object's latest warning events a probe
// records.
const maxEvents = 5

// Probe reads a real object on the probe's target cluster: the
// `kubernetes` probe type. It passes when the object is ready for its
// kind (ReadinessOf; a Service once it has a ready endpoint). Its source
// records the object's uid, resourceVersion, generation and
// observedGeneration, its conditions, for a workload its pods' readiness
// per node (with why a pod is not ready: ErrImagePull), for a Service its
// endpoints, and the object's latest warning events: what an analyzer
// reads to say why.
type Probe struct {
	Dial Dialer
}

var (
	pods           = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	events         = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	endpointSlices = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// Probe implements job.RemoteProbe.
func (p Probe) Probe(ctx context.Context, pr capstan.Probe, t *job.Target) (string, map[string]any, []byte) {
	source := map[string]any{}
	if t.Cluster == nil || pr.Object == nil {
		source["note"] = "a kubernetes probe needs a cluster target and an object"
		return capstan.EvidenceFailed, source, nil
	}
	ref := pr.Object
	for k, v := range map[string]string{"api_version": ref.APIVersion, "kind": ref.Kind, "namespace": ref.Namespace, "name": ref.Name} {
		if v != "" {
			source[k] = v
		}
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	client, err := Connect(t.Cluster, p.Dial)
	if err != nil {
		return noted(source, err)
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(ref.APIVersion)
	obj.SetKind(ref.Kind)
	obj.SetName(ref.Name)
	obj.SetNamespace(ref.Namespace)
	tg, err := client.targetOf(obj, ref.Namespace)
	if err != nil {
		return noted(source, err)
	}
	live, err := tg.api.Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		source["present"] = false
		source["note"] = fmt.Sprintf("%s %s does not exist", ref.Kind, ref.Name)
		if pr.Absent {
			return capstan.EvidencePassed, source, nil
		}
		return capstan.EvidenceFailed, source, nil
	}
	if err != nil {
		return noted(source, Classify(client.Server, "reading "+ref.Kind+" "+ref.Name, err))
	}
	source["present"] = true
	describe(source, live)
	if pr.Absent {
		source["note"] = fmt.Sprintf("%s %s still exists", ref.Kind, ref.Name)
		return capstan.EvidenceFailed, source, nil
	}
	ready := ReadinessOf(live)
	source["status"] = ready.Status
	if sel := workloadSelector(live); sel != nil {
		perNode, notReady := client.podsByNode(ctx, live.GetNamespace(), sel)
		source["pods"] = perNode
		if len(notReady) > 0 {
			source["pods_not_ready"] = notReady
		}
	}
	if live.GetKind() == "Service" {
		n := client.readyEndpoints(ctx, live.GetNamespace(), live.GetName())
		source["ready_endpoints"] = n
		ready = Readiness{Done: n > 0, Status: fmt.Sprintf("%d ready endpoints", n)}
		source["status"] = ready.Status
	}
	if ev := client.warnings(ctx, live); len(ev) > 0 {
		source["events"] = ev
	}
	if pr.Field != "" {
		v, found, _ := unstructured.NestedFieldNoCopy(live.Object, strings.Split(pr.Field, ".")...)
		source["field"] = pr.Field
		if found {
			source["observed"] = v
		}
	}
	if !ready.Done {
		return capstan.EvidenceFailed, source, nil
	}
	return capstan.EvidencePassed, source, nil
}

func noted(source map[string]any, err error) (string, map[string]any, []byte) {
	return job.ProbeFailed(source, err)
}

// describe records which object, at which version, the probe read.
func describe(source map[string]any, live *unstructured.Unstructured) {
	source["uid"] = string(live.GetUID())
	source["resource_version"] = live.GetResourceVersion()
	if g := live.GetGeneration(); g != 0 {
		source["generation"] = g
	}
	if og, found, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration"); found {
		source["observed_generation"] = og
	}
	list, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
	var conds []string
	for _, item := range list {
		m, _ := item.(map[string]any)
		c := fmt.Sprintf("%v=%v", m["type"], m["status"])
		if r, _ := m["reason"].(string); r != "" {
			c += " (" + r + ")"
		}
		conds = append(conds, c)
	}
	if len(conds) > 0 {
		source["conditions"] = conds
	}
}

// workloadSelector is a workload's pod selector, nil for other kinds.
func workloadSelector(obj *unstructured.Unstructured) labels.Selector {
	switch obj.GetKind() {
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet":
	default:
		return nil
	}
	m, found, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
	if !found {
		return nil
	}
	ls := &metav1.LabelSelector{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, ls); err != nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil
	}
	return sel
}

// podsByNode counts a workload's pods ready and not ready on each node,
// and says why each pod that is not ready is not (a container's waiting
// reason and message: ErrImagePull, CrashLoopBackOff).
func (c *Client) podsByNode(ctx context.Context, ns string, sel labels.Selector) (map[string]map[string]int, []string) {
	list, err := c.Dynamic.Resource(pods).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String(), Limit: 500})
	if err != nil {
		return map[string]map[string]int{"?": {"error": 1}}, []string{"listing pods: " + apiMessage(err)}
	}
	perNode := map[string]map[string]int{}
	var notReady []string
	for _, pod := range list.Items {
		node, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName")
		if node == "" {
			node = "(unscheduled)"
		}
		if perNode[node] == nil {
			perNode[node] = map[string]int{"ready": 0, "not_ready": 0}
		}
		if podReady(&pod) {
			perNode[node]["ready"]++
			continue
		}
		perNode[node]["not_ready"]++
		if len(notReady) < 20 {
			notReady = append(notReady, fmt.Sprintf("%s on %s: %s", pod.GetName(), node, waitingReason(&pod)))
		}
	}
	sort.Strings(notReady)
	return perNode, notReady
}

func podReady(pod *unstructured.Unstructured) bool {
	c := condition(pod, "Ready")
	return c != nil && c.status == "True"
}

func waitingReason(pod *unstructured.Unstructured) string {
	statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
	for _, s := range statuses {
		m, _ := s.(map[string]any)
		if w, found, _ := unstructured.NestedMap(m, "state", "waiting"); found {
			return fmt.Sprintf("%v: %v", w["reason"], w["message"])
		}
	}
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	return "phase " + or(phase, "Pending")
}

// readyEndpoints counts a Service's ready endpoints across its slices.
func (c *Client) readyEndpoints(ctx context.Context, ns, service string) int {
	list, err := c.Dynamic.Resource(endpointSlices).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + service, Limit: 100})
	if err != nil {
		return 0
	}
	n := 0
	for _, slice := range list.Items {
		eps, _, _ := unstructured.NestedSlice(slice.Object, "endpoints")
		for _, ep := range eps {
			m, _ := ep.(map[string]any)
			if ready, found, _ := unstructured.NestedBool(m, "conditions", "ready"); !found || ready {
				n++
			}
		}
	}
	return n
}

// warnings are the object's latest warning events, newest last.
func (c *Client) warnings(ctx context.Context, obj *unstructured.Unstructured) []string {
	sel := fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.uid", string(obj.GetUID())), fields.OneTermEqualSelector("type", "Warning"))
	list, err := c.Dynamic.Resource(events).Namespace(obj.GetNamespace()).List(ctx, metav1.ListOptions{FieldSelector: sel.String(), Limit: 100})
	if err != nil {
		return nil
	}
	var out []string
	for _, ev := range list.Items {
		reason, _, _ := unstructured.NestedString(ev.Object, "reason")
		msg, _, _ := unstructured.NestedString(ev.Object, "message")
		out = append(out, reason+": "+msg)
	}
	if len(out) > maxEvents {
		out = out[len(out)-maxEvents:]
	}
	return out
}

// maxWhyPods bounds the pods whose warning events a diagnosis reads.
const maxWhyPods = 3

// WhyNotReady reads why a workload is not ready, for a step that waited
// in vain: its pods per node, each pod not ready with its reason
// (ErrImagePull on worker-3), and the latest warning events of the first
// few of those pods. The summary is one line for the step's error (what
// an analyzer reads); the source is the evidence's. Nothing for other
// kinds, or when nothing can be read.
func (c *Client) WhyNotReady(ctx context.Context, obj *unstructured.Unstructured, namespace string) (source map[string]any, summary string) {
	t, err := c.targetOf(obj, namespace)
	if err != nil {
		return nil, ""
	}
	live, err := t.api.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, ""
	}
	sel := workloadSelector(live)
	if sel == nil {
		return nil, ""
	}
	source = map[string]any{}
	describe(source, live)
	list, err := c.Dynamic.Resource(pods).Namespace(live.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: sel.String(), Limit: 500})
	if err != nil {
		return source, "its pods could not be read: " + apiMessage(err)
	}
	perNode := map[string]map[string]int{}
	var notReady, events []string
	for i := range list.Items {
		pod := &list.Items[i]
		node, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName")
		node = or(node, "(unscheduled)")
		if perNode[node] == nil {
			perNode[node] = map[string]int{"ready": 0, "not_ready": 0}
		}
		if podReady(pod) {
			perNode[node]["ready"]++
			continue
		}
		perNode[node]["not_ready"]++
		notReady = append(notReady, fmt.Sprintf("pod %s on %s: %s", pod.GetName(), node, waitingReason(pod)))
		if len(notReady) <= maxWhyPods {
			for _, e := range c.warnings(ctx, pod) {
				events = append(events, pod.GetName()+": "+e)
			}
		}
	}
	sort.Strings(notReady)
	source["pods"] = perNode
	if len(notReady) == 0 {
		return source, ""
	}
	source["pods_not_ready"] = notReady
	if len(events) > 0 {
		source["events"] = events
	}
	shown := notReady
	if len(shown) > maxWhyPods {
		shown = append(shown[:maxWhyPods:maxWhyPods], fmt.Sprintf("and %d more", len(notReady)-maxWhyPods))
	}
	return source, strings.Join(shown, "; ")
}
