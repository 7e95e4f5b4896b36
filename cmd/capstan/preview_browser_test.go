package main_test

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/kubetest"
)

// TestClusterPreviewInABrowser runs web/console/e2e/preview.mjs: the
// console's plan review, in Debian's Chromium, previews an app's plan on
// the run's real cluster — the Deployment and Service it would create,
// with their fields — and the page passes axe-core's WCAG 2 A and AA.
func TestClusterPreviewInABrowser(t *testing.T) {
	t.Parallel()
	dir, node := nodeProject(t, "web/console", "playwright-core")
	chromium := chromiumPath(t)
	c := kubetest.Shared(t)
	token := bundledGrant(t, c, "capstan-preview")
	ns := c.Namespace(t, "previewed")
	lab := startKubeLab(t, c, "lab", token, "--egress-allow", "127.0.0.1/32")
	p := lab.p
	ok := func(q string, vars map[string]any) map[string]any { t.Helper(); return lab.ok(kubeAdmin, q, vars) }
	intent := ok(`mutation { createIntent(input: {action: "create", targetResourceType: "kubernetes.app", desiredResult: {name: "shop"}, constraints: {environment: "lab", cluster: "lab-k8s"}}) { id } }`, nil)["createIntent"].(map[string]any)["id"]
	plan := ok(`mutation($id: ID!) { planIntent(input: {intent: $id}) { id version } }`, map[string]any{"id": intent})["planIntent"].(map[string]any)
	plan = ok(`mutation($p: ID!, $v: Int!, $ns: Any!) { editPlan(input: {plan: $p, version: $v, changes: [{op: SET_PARAMETERS, node: "apply-app", parameters: {namespace: $ns}}]}) { id version } }`,
		map[string]any{"p": plan["id"], "v": plan["version"], "ns": ns})["editPlan"].(map[string]any)

	cmd := exec.Command(node, "e2e/preview.mjs")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "CAPSTAN_URL="+p.url, "CAPSTAN_TOKEN="+kubeAdmin, "CAPSTAN_PLAN="+fmt.Sprint(plan["id"]),
		"CAPSTAN_OBJECT=Deployment "+ns+"/shop", "CHROMIUM="+chromium)
	out := runBrowserScript(t, cmd, nil)
	require.Contains(t, out, "OK: the preview shows Deployment "+ns+"/shop created")
}
