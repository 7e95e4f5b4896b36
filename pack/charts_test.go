package pack_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/capstan-dev/capstan/pack"
)

const chartPack = `id: charted
version: 1.0.0
resource_types:
  - {key: web, display_name: Web, allowed_actions: [install]}
scenarios:
  - id: web.install
    action: install
    target_resource_type: web
    requires:
      - {id: cluster, capability: kubernetes.cluster, strategy: existing}
    plan:
      nodes:
        - id: install
          type: job
          title: helm install
          requires: [cluster]
          job:
            run: {runner: helm, target: cluster, chart: CHART, release: web, namespace: web}
            outputs: {evidence: [{name: ready, type: sim}]}
`

func TestAHelmStepCarriesItsPacksChart(t *testing.T) {
	load := func(chart string, files fstest.MapFS) ([]string, map[string]string) {
		files["p/pack.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(chartPack, "CHART", chart, 1))}
		p, problems := pack.LoadFS(files, "p", known(t))
		var out []string
		for _, pr := range problems {
			out = append(out, pr.String())
		}
		if p == nil {
			return out, nil
		}
		return out, p.Scenarios[0].Plan.Nodes[0].Job.Run.ChartFiles
	}
	problems, files := load("web", fstest.MapFS{
		"p/charts/web/Chart.yaml":                {Data: []byte("apiVersion: v2\nname: web\nversion: 0.1.0\n")},
		"p/charts/web/templates/deployment.yaml": {Data: []byte("kind: Deployment\n")},
	})
	if len(problems) > 0 || files["Chart.yaml"] == "" || files["templates/deployment.yaml"] != "kind: Deployment\n" {
		t.Fatalf("problems %v, files %v", problems, files)
	}
	for name, tc := range map[string]struct {
		chart string
		files fstest.MapFS
		want  string
	}{
		"a chart the pack does not ship": {"nope", fstest.MapFS{"p/charts/web/Chart.yaml": {Data: []byte("name: web\n")}}, `chart "nope" is not one the pack ships`},
		"no Chart.yaml":                  {"web", fstest.MapFS{"p/charts/web/values.yaml": {Data: []byte("a: 1\n")}}, "has no Chart.yaml"},
		"too large":                      {"web", fstest.MapFS{"p/charts/web/Chart.yaml": {Data: []byte(strings.Repeat("#", pack.MaxChartBytes+1))}}, "more than"},
		"a file beside the charts":       {"web", fstest.MapFS{"p/charts/README": {Data: []byte("x")}, "p/charts/web/Chart.yaml": {Data: []byte("name: web\n")}}, "one directory per chart"},
	} {
		t.Run(name, func(t *testing.T) {
			problems, _ := load(tc.chart, tc.files)
			if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Fatalf("problems = %v, want %q", problems, tc.want)
			}
		})
	}
}
