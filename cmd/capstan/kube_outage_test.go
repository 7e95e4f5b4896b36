package main_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan/internal/kubecluster"
	"github.com/capstan-dev/capstan/internal/kubetest"
)

// TestAnOperationOutlivesTheClustersOutages is the cluster's faults
// under a running operation, through the API, on both stores: an app's
// rollout waits (every node is cordoned); its etcd is stopped until the
// API server fails a read, and resumed; its API server is killed and
// started again; then worker-1 is uncordoned. The step's wait
// rides through both (its watch lists and watches again) and the
// operation succeeds, with the pod Ready on worker-1. A cluster of
// its own: the others' tests share theirs.
func TestAnOperationOutlivesTheClustersOutages(t *testing.T) {
	t.Parallel()
	c := kubetest.Private(t, kubecluster.Options{})
	token := bundledGrant(t, c, "capstan-outage")
	ns := c.Namespace(t, "outage")
	for store, args := range bothStores(t, "--egress-allow", "127.0.0.1/32") {
		t.Run(store, func(t *testing.T) {
			env := "lab-" + store
			lab := startKubeLab(t, c, env, token, args...)
			p, ok := lab.p, lab.ok
			name := "web-" + store
			intent := ok(kubeAdmin, `mutation($n: String!, $e: String!) { createIntent(input: {action: "create", targetResourceType: "kubernetes.app", desiredResult: {name: $n}, constraints: {environment: $e, cluster: "lab-k8s"}}) { id } }`,
				map[string]any{"n": name, "e": env})["createIntent"].(map[string]any)["id"]
			plan := ok(kubeAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status version problems } }`, map[string]any{"id": intent})["planIntent"].(map[string]any)
			require.Equal(t, "READY", plan["status"], "%v", plan)
			// Every node cordoned: the rollout waits for one.
			cordon(t, c, true, "worker-1", "worker-2", "worker-3")
			ok(kubeAdmin, `mutation($p: ID!, $v: Int!, $params: Map!) { editPlan(input: {plan: $p, version: $v, changes: [{op: SET_PARAMETERS, node: "apply-app", parameters: $params}]}) { id } }`,
				map[string]any{"p": plan["id"], "v": plan["version"], "params": map[string]any{"avoid_node": "worker-3", "namespace": ns, "replicas": 1, "progress_deadline": 600}})
			op := ok(kubeAdmin, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
			ctx := context.Background()
			require.Eventually(t, func() bool {
				_, err := c.Admin.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
				return err == nil
			}, time.Minute, 100*time.Millisecond, "the step applied its Deployment and waits")
			c.ObjectWatched(t, "apps", "v1", "deployments") // the step's wait is on its watch

			c.Own.StopEtcd()
			require.Eventually(t, func() bool {
				short, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				_, err := c.Admin.AppsV1().Deployments(ns).Get(short, name, metav1.GetOptions{ResourceVersion: ""})
				return err != nil
			}, time.Minute, 100*time.Millisecond, "with etcd stopped, the API server fails a read")
			c.Own.ResumeEtcd()
			c.Own.KillAPIServer()
			require.NoError(t, c.Own.StartAPIServer(ctx))
			require.Equal(t, "RUNNING", statusAs(t, p, kubeAdmin, op), "the step still waits")

			node := "worker-1"
			cordon(t, c, false, node)
			require.Eventually(t, func() bool {
				switch statusAs(t, p, kubeAdmin, op) {
				case "SUCCEEDED", "FAILED", "CANCELLED", "ROLLED_BACK", "WAITING":
					return true
				}
				return false
			}, 2*time.Minute, 100*time.Millisecond, "%v\nscheduler:\n%s\ncontroller manager:\n%s", ok(kubeAdmin, `query($id: ID!) { operation(id: $id) { status currentNodes nodeRuns { node status attempts error } } }`, map[string]any{"id": op}),
				c.Own.LogTail("kube-scheduler", 10), c.Own.LogTail("kube-controller-manager", 10))
			got := ok(kubeAdmin, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status attempts error } evidence { item result source } } }`, map[string]any{"id": op})["operation"].(map[string]any)
			require.Equal(t, "SUCCEEDED", got["status"], "%v", got)
			for _, e := range got["evidence"].([]any) {
				e := e.(map[string]any)
				if e["item"] == "rolled-out" {
					require.Equal(t, "PASSED", e["result"], "%v", e)
					require.Contains(t, e["source"].(map[string]any)["pods"], node, "the pod is Ready on the node uncordoned: %v", e)
				}
			}
		})
	}
}

// cordon marks nodes unschedulable, or schedulable again.
func cordon(t *testing.T, c *kubetest.Cluster, on bool, nodes ...string) {
	t.Helper()
	for _, n := range nodes {
		_, err := c.Admin.CoreV1().Nodes().Patch(context.Background(), n, types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)), metav1.PatchOptions{})
		require.NoError(t, err)
	}
}
