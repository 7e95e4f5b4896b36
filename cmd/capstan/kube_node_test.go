package main_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/internal/kubetest"
)

// TestANodeIsDrainedAndRemovedAfterApproval is remove_node through the
// API on both stores: a node of the run's cluster with a pod on it is
// taken out once an SRE approves: cordoned, its pod evicted through the
// eviction API and gone, the Node removed, proven by a probe that finds
// it absent.
func TestANodeIsDrainedAndRemovedAfterApproval(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	token := bundledGrant(t, c, "capstan-nodes")
	ns := c.Namespace(t, "on-node")
	for store, args := range bothStores(t, "--egress-allow", "127.0.0.1/32") {
		t.Run(store, func(t *testing.T) {
			node := c.Node(t, "leaving", nil)
			ctx := context.Background()
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "on-" + node, Namespace: ns},
				Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.internal/app:1"}}}}
			_, err := c.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
			require.NoError(t, err)
			env := "lab-" + store
			lab := startKubeLab(t, c, env, token, args...)
			p, ok := lab.p, lab.ok
			intent := ok(kubeAdmin, `mutation($e: String!) { createIntent(input: {action: "remove_node", targetResourceType: "kubernetes.cluster", desiredResult: {name: "lab-k8s"}, constraints: {environment: $e, cluster: "lab-k8s"}}) { id } }`,
				map[string]any{"e": env})["createIntent"].(map[string]any)["id"]
			plan := ok(kubeAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status version problems scenarioRef } }`, map[string]any{"id": intent})["planIntent"].(map[string]any)
			require.Equal(t, "READY", plan["status"], "%v", plan)
			require.Equal(t, "kubernetes.cluster.remove_node@1.5.0", plan["scenarioRef"])
			ok(kubeAdmin, `mutation($p: ID!, $v: Int!, $params: Map!) { editPlan(input: {plan: $p, version: $v, changes: [{op: SET_PARAMETERS, node: "drain-node", parameters: $params}]}) { id } }`,
				map[string]any{"p": plan["id"], "v": plan["version"], "params": map[string]any{"node": node}})
			op := ok(kubeAdmin, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
			waitForStatusAs(t, p, kubeAdmin, op, "WAITING")
			n, err := c.Admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			require.NoError(t, err)
			require.False(t, n.Spec.Unschedulable, "nothing is cordoned before the approval")
			ok(kubeSRE, `mutation($o: ID!) { decideGate(input: {operation: $o, node: "approve-remove", approve: true}) { status } }`, map[string]any{"o": op})
			waitForEndAs(t, p, kubeAdmin, op)
			got := ok(kubeAdmin, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status error } evidence { item result source } } }`, map[string]any{"id": op})["operation"].(map[string]any)
			require.Equal(t, "SUCCEEDED", got["status"], "%v", got)
			evidence := map[string]map[string]any{}
			for _, e := range got["evidence"].([]any) {
				e := e.(map[string]any)
				evidence[e["item"].(string)] = e
			}
			drained := evidence["node-"+node+"-drained"]
			require.NotNil(t, drained, "%v", evidence)
			require.Equal(t, []any{ns + "/on-" + node}, drained["source"].(map[string]any)["evicted"])
			require.Equal(t, true, drained["source"].(map[string]any)["removed"])
			require.Equal(t, "PASSED", evidence["node-gone"]["result"], "%v", evidence)
			_, err = c.Admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			require.Error(t, err, "the node is gone")
			_, err = c.Admin.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
			require.Error(t, err, "its pod was evicted")
		})
	}
}
