package kube

import (
	"context"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
)

// maxWarningsRead bounds the events one Warnings call lists.
const maxWarningsRead = 500

// Warnings reads the warning events of namespace about objects whose
// name starts with prefix, seen at since or later, oldest first, the last
// maxEvents of them ("ReplicaSet tempo-5d8f: FailedCreate: …"): why a
// Helm release that never became ready did not, read after its rollback
// removed its objects (their events stay a while). Nothing when they
// cannot be read.
func (c *Client) Warnings(ctx context.Context, namespace, prefix string, since time.Time) []string {
	list, err := c.Dynamic.Resource(events).Namespace(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("type", "Warning").String(), Limit: maxWarningsRead})
	if err != nil {
		return nil
	}
	type seen struct {
		at   time.Time
		line string
	}
	var found []seen
	for _, ev := range list.Items {
		name, _, _ := unstructured.NestedString(ev.Object, "involvedObject", "name")
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		at := eventTime(&ev)
		if at.Before(since.Truncate(time.Second)) {
			continue
		}
		kind, _, _ := unstructured.NestedString(ev.Object, "involvedObject", "kind")
		reason, _, _ := unstructured.NestedString(ev.Object, "reason")
		msg, _, _ := unstructured.NestedString(ev.Object, "message")
		found = append(found, seen{at, kind + " " + name + ": " + reason + ": " + msg})
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].at.Before(found[j].at) })
	if len(found) > maxEvents {
		found = found[len(found)-maxEvents:]
	}
	out := make([]string, 0, len(found))
	for _, f := range found {
		out = append(out, f.line)
	}
	return out
}

// eventTime is when an event was last seen: lastTimestamp, eventTime or
// the object's creation.
func eventTime(ev *unstructured.Unstructured) time.Time {
	for _, path := range [][]string{{"lastTimestamp"}, {"eventTime"}, {"series", "lastObservedTime"}} {
		if s, ok, _ := unstructured.NestedString(ev.Object, path...); ok && s != "" {
			for _, layout := range []string{time.RFC3339Nano, time.RFC3339} {
				if t, err := time.Parse(layout, s); err == nil {
					return t
				}
			}
		}
	}
	return ev.GetCreationTimestamp().Time
}
