package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSIGKILLDuringASubOperation kills the real server while the seed's
// Tempo operation runs its MinIO sub-operation — while the child waits at
// its prod gate, and while the child's install job runs — restarts it, and
// checks that both operations finish as an uninterrupted run does: one
// child operation (never a second), one MinIO resource, the parent bound to
// it, and no timeline gap in either — on both stores.
func TestSIGKILLDuringASubOperation(t *testing.T) {
	t.Parallel()
	stores := bothStores(t)
	points := map[string]string{"child waits at its gate": "approve-prod-storage", "child's install job runs": "helm-install"}
	for store, args := range stores {
		for name, node := range points {
			t.Run(store+"/"+name, func(t *testing.T) { runKilledChild(t, args, node) })
		}
	}
}

const childQuery = `query($id: ID!) { operation(id: $id) { status resource { key lifecycleStatus lastOperation { id } }
  nodeRuns { node status } timeline(first: 500) { edges { node { sequence type payload } } } } }`

func runKilledChild(t *testing.T, args []string, killAt string) {
	dir := t.TempDir()
	// An organization of its own: on a shared Neo4j an earlier run's MinIO
	// would serve this plan and no sub-operation would start.
	tokens := filepath.Join(dir, "tokens.yaml")
	org := fmt.Sprintf("kill-%d", time.Now().UnixNano())
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf(`tokens:
  - {token: %q, actor: alice, organization: %s, roles: [admin]}
  - {token: %q, actor: bob, organization: %s, roles: [sre]}
`, token, org, token+"-sre", org)), 0o600))
	args = append([]string{"--tokens", tokens}, args...)
	p := start(t, dir, args...)
	name := "tempo-" + time.Now().Format("150405.000000")[7:]
	in := p.gql(t, `mutation($n: String!) { createIntent(input: {action: "install", targetResourceType: "tempo.instance", scenario: "tempo.install@1.3.0",
	  desiredResult: {name: $n}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, map[string]any{"n": name})
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status } }`, map[string]any{"id": in["createIntent"].(map[string]any)["id"]})["planIntent"].(map[string]any)
	require.Equal(t, "READY", plan["status"])
	began := time.Now().UTC().Add(-time.Second).Format(time.RFC3339Nano)
	op := p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)

	child := childOf(t, p, op)
	deadline := time.Now().Add(30 * time.Second)
	for nodeStatus(t, p, child, killAt) != map[string]string{"approve-prod-storage": "WAITING_APPROVAL", "helm-install": "RUNNING"}[killAt] {
		require.True(t, time.Now().Before(deadline), "never reached the kill point")
		if killAt == "helm-install" && status(t, p, child) == "WAITING" {
			approveNode(t, p, child, "approve-prod-storage")
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done

	again := start(t, dir, args...)
	deadline = time.Now().Add(90 * time.Second)
	for status(t, again, op) != "SUCCEEDED" {
		require.True(t, time.Now().Before(deadline), "the operation did not finish after the restart (%s):\n%s", status(t, again, op), again.output())
		if status(t, again, child) == "WAITING" {
			approveNode(t, again, child, "approve-prod-storage")
		}
		if status(t, again, op) == "WAITING" {
			approveNode(t, again, op, "approve-rollout")
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, child, childOf(t, again, op), "the restart found the same child, never a second one")
	ops := again.gql(t, `query($t: Time) { operations(filter: {createdAfter: $t}) { totalCount } }`, map[string]any{"t": began})["operations"].(map[string]any)
	require.Equal(t, float64(2), ops["totalCount"], "one parent and one child")
	for _, id := range []string{op, child} {
		res := again.gql(t, childQuery, map[string]any{"id": id})["operation"].(map[string]any)
		require.Equal(t, "SUCCEEDED", res["status"])
		resource := res["resource"].(map[string]any)
		require.Equal(t, "ACTIVE", resource["lifecycleStatus"], "%v", resource)
		require.Equal(t, id, resource["lastOperation"].(map[string]any)["id"])
		for i, e := range res["timeline"].(map[string]any)["edges"].([]any) {
			require.Equal(t, float64(i+1), e.(map[string]any)["node"].(map[string]any)["sequence"], "no timeline gap")
		}
	}
	minios := again.gql(t, `{ resources(filter: {type: "minio.instance"}, first: 50) { edges { node { key lastOperation { id } } } } }`, nil)["resources"].(map[string]any)["edges"].([]any)
	var created int
	for _, e := range minios {
		if last, _ := e.(map[string]any)["node"].(map[string]any)["lastOperation"].(map[string]any); last != nil && last["id"] == child {
			created++
		}
	}
	require.Equal(t, 1, created, "the child created one MinIO")
	again.stop(t)
}

// childOf waits for the operation's child, named by its timeline.
func childOf(t *testing.T, p *proc, op string) string {
	t.Helper()
	var child string
	require.Eventually(t, func() bool {
		data, errs := p.try(t, `query($id: ID!) { operation(id: $id) { timeline(first: 500) { edges { node { type payload } } } } }`, map[string]any{"id": op})
		if len(errs) > 0 {
			return false
		}
		for _, e := range data["operation"].(map[string]any)["timeline"].(map[string]any)["edges"].([]any) {
			n := e.(map[string]any)["node"].(map[string]any)
			if n["type"] == "suboperation.started" {
				child = n["payload"].(map[string]any)["child"].(string) // the id the API takes

			}
		}
		return child != ""
	}, 30*time.Second, 10*time.Millisecond)
	return child
}

func nodeStatus(t *testing.T, p *proc, op, node string) string {
	data, errs := p.try(t, `query($id: ID!) { operation(id: $id) { nodeRuns { node status } } }`, map[string]any{"id": op})
	if len(errs) > 0 || data["operation"] == nil {
		return ""
	}
	for _, r := range data["operation"].(map[string]any)["nodeRuns"].([]any) {
		if r.(map[string]any)["node"] == node {
			return r.(map[string]any)["status"].(string)
		}
	}
	return ""
}

// approveNode approves a gate as the second (sre) dev approver; errors
// (not waiting yet, already decided) are ignored: the caller polls.
func approveNode(t *testing.T, p *proc, op, node string) {
	_, _ = p.tryAs(t, token+"-sre", `mutation($op: ID!, $n: String!) { decideGate(input: {operation: $op, node: $n, approve: true}) { status } }`, map[string]any{"op": op, "n": node})
}
