package main_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/internal/kubetest"
	"github.com/capstan-dev/capstan/internal/s3test"
)

// TestTempoIsInstalledUpgradedAndRepairedOnTheCluster is tempo 2.0.0's
// lifecycle through the API, on both stores, on the run's cluster and a
// real S3 server the catalog registers (dedicated, outside prod): the
// install makes Tempo's bucket and installs the pack's chart with the
// store's endpoint and keys; the upgrade moves the chart to another image
// (helm upgrade); a kubectl scale by hand is drift, and tempo.repair,
// approved by an SRE, takes it back.
func TestTempoIsInstalledUpgradedAndRepairedOnTheCluster(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	token := bundledGrant(t, c, "capstan-tempo")
	srv := s3test.Start(t)
	for store, args := range bothStores(t, "--egress-allow", "127.0.0.1/32") {
		t.Run(store, func(t *testing.T) {
			env := "lab-" + store
			lab := startKubeLab(t, c, env, token, args...)
			p, ok := lab.p, lab.ok
			lab.putSecret("s3-access", s3test.AccessKey)
			lab.putSecret("s3-secret", s3test.SecretKey)
			doc := fmt.Sprintf("organization: acme\nenvironments: [%[1]s]\nclusters:\n  - {name: tempo-k8s, environment: %[1]s, region: lab-1, health: healthy, api_server: %[2]q, credentials: \"secret:lab-k8s-token\", ca: %[3]q}\n"+
				"external_services:\n  - {name: lab-s3, type: s3.store, environment: %[1]s, region: lab-1, health: healthy, provides: [{capability: object_storage.s3, attributes: {encryption: optional, access_mode: dedicated, endpoint: %[4]q, access_key: 'secret:s3-access', secret_key: 'secret:s3-secret'}}]}\n",
				env, c.Server, string(c.CA), srv.Endpoint)
			ok(kubeAdmin, `mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": doc})
			name := fmt.Sprintf("tempo-%s-%d", store, p.cmd.Process.Pid)
			run := func(action, node string, params map[string]any, gate string) (string, map[string]any) {
				t.Helper()
				intent := ok(kubeAdmin, `mutation($a: String!, $n: String!, $e: String!) { createIntent(input: {action: $a, targetResourceType: "tempo.instance", desiredResult: {name: $n}, constraints: {environment: $e, cluster: "tempo-k8s"}}) { id } }`,
					map[string]any{"a": action, "n": name, "e": env})["createIntent"].(map[string]any)["id"]
				plan := ok(kubeAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status version scenarioRef problems } }`, map[string]any{"id": intent})["planIntent"].(map[string]any)
				require.Equal(t, "READY", plan["status"], "%v", plan)
				require.Equal(t, "tempo."+action+"@2.0.0", plan["scenarioRef"])
				if params != nil {
					ok(kubeAdmin, `mutation($p: ID!, $v: Int!, $node: String!, $params: Map!) { editPlan(input: {plan: $p, version: $v, changes: [{op: SET_PARAMETERS, node: $node, parameters: $params}]}) { id } }`,
						map[string]any{"p": plan["id"], "v": plan["version"], "node": node, "params": params})
				}
				op := ok(kubeAdmin, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
				waitForStatusAs(t, p, kubeAdmin, op, "WAITING")
				ok(kubeSRE, `mutation($o: ID!, $n: String!) { decideGate(input: {operation: $o, node: $n, approve: true}) { status } }`, map[string]any{"o": op, "n": gate})
				waitForEndAs(t, p, kubeAdmin, op)
				got := ok(kubeAdmin, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status error } evidence { item result simulated source } } }`, map[string]any{"id": op})["operation"].(map[string]any)
				require.Equal(t, "SUCCEEDED", got["status"], "%v", got)
				evidence := map[string]any{}
				for _, e := range got["evidence"].([]any) {
					e := e.(map[string]any)
					require.Equal(t, false, e["simulated"], "%v", e)
					require.NotEqual(t, "FAILED", e["result"], "%v", e)
					evidence[e["item"].(string)] = e
				}
				return op, evidence
			}
			_, installed := run("install", "helm-install", map[string]any{"avoid_node": "worker-3"}, "approve-rollout")
			require.Contains(t, installed, "traces-bucket-writable")
			require.Contains(t, installed, "otlp-endpoints")
			ctx := context.Background()
			deployments := c.Admin.AppsV1().Deployments(name)
			live, err := deployments.Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, "grafana/tempo:2.5.0", live.Spec.Template.Spec.Containers[0].Image)
			secret, err := c.Admin.CoreV1().Secrets(name).Get(ctx, name+"-s3", metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, s3test.AccessKey, string(secret.Data["AWS_ACCESS_KEY_ID"]), "Tempo is given the store's keys, resolved from their references")

			_, upgraded := run("upgrade", "helm-upgrade", map[string]any{"avoid_node": "worker-3"}, "approve-upgrade")
			require.Contains(t, upgraded, "rolled-out")
			live, err = deployments.Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, "grafana/tempo:2.6.0", live.Spec.Template.Spec.Containers[0].Image)

			id := ok(kubeAdmin, `query($k: String!) { resource(key: $k) { id } }`, map[string]any{"k": "tempo.instance/" + name})["resource"].(map[string]any)["id"]
			assess := func() map[string]any {
				t.Helper()
				return ok(kubeAdmin, `mutation($r: ID!) { assessResource(input: {resource: $r}) { healthStatus assessment { diff { field desired observed changedBy } } } }`,
					map[string]any{"r": id})["assessResource"].(map[string]any)
			}
			require.Equal(t, "HEALTHY", assess()["healthStatus"])
			_, err = deployments.UpdateScale(ctx, name, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: name}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}, metav1.UpdateOptions{FieldManager: "kubectl"})
			require.NoError(t, err)
			drifted := assess()
			require.Equal(t, "DRIFTED", drifted["healthStatus"], "%v", drifted)
			require.Contains(t, drifted["assessment"].(map[string]any)["diff"], map[string]any{"field": "Deployment " + name + "/" + name + " spec.replicas", "desired": float64(1), "observed": float64(3), "changedBy": "kubectl"})

			run("repair", "", nil, "approve")
			live, err = deployments.Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, int32(1), *live.Spec.Replicas, "the repair takes the chart's replicas back")
			require.Equal(t, "grafana/tempo:2.6.0", live.Spec.Template.Spec.Containers[0].Image, "as the upgrade left them")
			require.NoError(t, c.Admin.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}))
		})
	}
}
