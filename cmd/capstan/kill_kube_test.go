package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/internal/kubetest"
)

// kubeKillPack applies a claim in namespace %[1]s and waits until it is
// bound: a step that is still at work when the server dies.
const kubeKillPack = `id: kube-kill
version: 1.0.0
resource_types:
  - {key: claim, display_name: Claim, allowed_actions: [install]}
scenarios:
  - id: claim.install
    action: install
    target_resource_type: claim
    requires:
      - {id: cluster, capability: kubernetes.cluster, strategy: existing, constraints: {name: "${intent.cluster}", environment: "${intent.environment}"}}
    plan:
      nodes:
        - id: apply
          type: job
          title: Apply a claim and wait until it is bound
          requires: [cluster]
          job:
            run:
              runner: kubernetes
              target: cluster
              namespace: %[1]s
              timeout: 2m
              manifests: |
                apiVersion: v1
                kind: PersistentVolumeClaim
                metadata: {name: '${resource.name}'}
                spec: {accessModes: [ReadWriteOnce], storageClassName: '${resource.name}', resources: {requests: {storage: 1Gi}}}
            outputs:
              evidence: [{name: bound, type: kubernetes, target: cluster, object: {api_version: v1, kind: PersistentVolumeClaim, namespace: %[1]s, name: '${resource.name}'}}]
            controls: {idempotent: true}
`

// TestSIGKILLDuringAKubernetesStep kills the real server while its
// kubernetes step waits for the claim it applied, on both stores: after
// the restart the step runs again, reads the claim, finds it applied and
// writes nothing (the same object, one apply by Capstan's field
// manager), and ends once the claim is bound.
func TestSIGKILLDuringAKubernetesStep(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "kill")
	token := c.Token(t, ns, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims", "pods", "events"}, Verbs: []string{"get", "list", "watch", "create", "patch"}}}, nil)
	packs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(packs, "kube-kill.yaml"), []byte(fmt.Sprintf(kubeKillPack, ns)), 0o600))
	for store, args := range bothStores(t, "--egress-allow", "127.0.0.1/32", "--packs", packs) {
		t.Run(store, func(t *testing.T) {
			dir := t.TempDir()
			p := start(t, dir, args...)
			org := p.gql(t, `{ viewer { organization } }`, nil)["viewer"].(map[string]any)["organization"].(string)
			p.gql(t, `mutation($v: String!) { putSecret(input: {name: "kill-k8s-token", value: $v}) { name } }`, map[string]any{"v": token})
			env := "kill-" + store
			p.gql(t, `mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": kubeCatalog(c, org, "kill-k8s", env, "kill-k8s-token")})
			name := "claim-" + store
			in := p.gql(t, `mutation($n: String!, $e: String!) { createIntent(input: {action: "install", targetResourceType: "claim", desiredResult: {name: $n}, constraints: {environment: $e, cluster: "kill-k8s"}}) { id } }`,
				map[string]any{"n": name, "e": env})["createIntent"].(map[string]any)["id"]
			plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": in})["planIntent"].(map[string]any)
			require.Equal(t, "READY", plan["status"], "%v", plan)
			op := p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)

			first := c.ClaimStored(t, ns, name) // the step applied it, and waits for a volume
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
			<-p.done
			p = start(t, dir, args...)
			c.Volume(t, name)

			waitForEnd(t, p, op)
			got := p.gql(t, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status attempts } evidence { item result source } } }`, map[string]any{"id": op})["operation"].(map[string]any)
			require.Equal(t, "SUCCEEDED", got["status"], "%v", got)
			live, err := c.Admin.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, first.UID, live.UID, "the same claim: never deleted and made again")
			applies := 0
			for _, mf := range live.ManagedFields {
				if mf.Manager == "capstan" && mf.Operation == metav1.ManagedFieldsOperationApply {
					applies++
				}
			}
			require.Equal(t, 1, applies, "one apply by Capstan's field manager")
			unchanged := false
			for _, e := range got["evidence"].([]any) {
				if e.(map[string]any)["item"] == "persistentvolumeclaim-"+name+"-unchanged" {
					unchanged = true
				}
			}
			require.True(t, unchanged, "the step after the restart found the claim applied and wrote nothing: %v", got["evidence"])
		})
	}
}
