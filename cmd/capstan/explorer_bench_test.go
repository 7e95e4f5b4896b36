package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkGraphExplorerInABrowser measures the graph explorer in
// headless Chromium against a real server (web/console/e2e/graph-bench.mjs):
// the first render of a 500-node neighbourhood (prod-k8s, with the seed's
// story run and 520 more services on it), and a health change to the
// screen. It runs once whatever b.N is and reports the figures as
// metrics; `make bench-console` runs it.
func BenchmarkGraphExplorerInABrowser(b *testing.B) {
	dir, node := nodeProject(b, "web/console", "playwright-core")
	chromium := chromiumPath(b)
	data := b.TempDir()
	tokens := filepath.Join(data, "tokens.yaml")
	require.NoError(b, os.WriteFile(tokens, []byte(fmt.Sprintf("tokens:\n  - {token: %q, actor: alice, organization: demo, roles: [admin]}\n  - {token: %q, actor: bob, organization: demo, roles: [sre]}\n", token, token+"-sre")), 0o600))
	p := start(b, filepath.Join(data, "data"), "--tokens", tokens)
	defer p.kill()
	runStory(b, p)
	var doc strings.Builder
	doc.WriteString("internal_services:\n")
	for i := range 520 {
		fmt.Fprintf(&doc, "  - {name: bench-svc-%03d, type: zz.instance, environment: prod, region: eu-central, health: healthy, runs_on: prod-k8s}\n", i)
	}
	p.gql(b, `mutation($d: String!) { importCatalog(input: {document: $d}) { created } }`, map[string]any{"d": doc.String()})
	cluster := p.gql(b, `{ resource(key: "kubernetes.cluster/prod-k8s") { id } }`, nil)["resource"].(map[string]any)["id"].(string)

	b.ResetTimer()
	cmd := exec.Command(node, "e2e/graph-bench.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAPSTAN_URL="+p.url, "CAPSTAN_TOKEN="+token, "CAPSTAN_CLUSTER="+cluster, "CHROMIUM="+chromium)
	printed := runBrowserScript(b, cmd, nil)
	b.StopTimer()
	_, line, ok := strings.Cut(printed, "FIGURES ")
	require.True(b, ok, printed)
	line, _, _ = strings.Cut(line, "\n")
	var figures map[string]float64
	require.NoError(b, json.Unmarshal([]byte(line), &figures))
	for name, v := range figures {
		b.ReportMetric(v, strings.ReplaceAll(name, "_", "-"))
	}
	b.Logf("%s", printed)
}
