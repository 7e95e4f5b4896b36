package pack

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/capstan-dev/capstan"
)

// Bounds of the charts a pack ships.
const (
	MaxChartBytes = 1 << 20
	MaxChartFiles = 200
)

// readCharts reads a directory pack's charts: each directory under
// charts/ is one chart, its files by path inside it.
func readCharts(fsys fs.FS, dir string) ([]capstan.Chart, []Problem) {
	root := path.Join(dir, "charts")
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, nil // no charts
	}
	var charts []capstan.Chart
	var problems []Problem
	for _, e := range entries {
		if !e.IsDir() {
			problems = append(problems, Problem{File: path.Join(root, e.Name()), Message: "charts/ holds one directory per chart"})
			continue
		}
		c := capstan.Chart{Name: e.Name(), Files: map[string]string{}}
		base := path.Join(root, e.Name())
		err := fs.WalkDir(fsys, base, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("%s is not a regular file", p)
			}
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			c.Files[strings.TrimPrefix(p, base+"/")] = string(data)
			return nil
		})
		if err != nil {
			problems = append(problems, Problem{File: base, Message: err.Error()})
			continue
		}
		charts = append(charts, c)
	}
	return charts, problems
}

// resolveCharts checks the pack's charts and copies each one's files
// into every helm run that names it, in scenarios and node templates: a
// plan carries the chart it runs.
func resolveCharts(p *capstan.ScenarioPack, where string) []Problem {
	var problems []Problem
	byName := map[string]*capstan.Chart{}
	for i := range p.Charts {
		c := &p.Charts[i]
		if byName[c.Name] != nil {
			problems = append(problems, Problem{File: where, Message: fmt.Sprintf("chart %s is defined twice", c.Name)})
			continue
		}
		byName[c.Name] = c
		if err := checkChart(c); err != nil {
			problems = append(problems, Problem{File: where, Message: fmt.Sprintf("chart %s: %v", c.Name, err)})
		}
	}
	fill := func(what string, r *capstan.RunSpec) {
		if r == nil || r.Runner != "helm" {
			return
		}
		c := byName[r.Chart]
		if c == nil {
			problems = append(problems, Problem{File: where, Message: fmt.Sprintf("%s: chart %q is not one the pack ships", what, r.Chart)})
			return
		}
		r.ChartFiles = c.Files
	}
	nodes := func(what string, ns []capstan.PlanNode) {
		for i := range ns {
			if j := ns[i].Job; j != nil {
				fill(what+" node "+ns[i].ID+" run", &j.Run)
				fill(what+" node "+ns[i].ID+" compensation", j.Controls.Rollback.Compensation)
			}
		}
	}
	for i := range p.Scenarios {
		nodes("scenario "+p.Scenarios[i].ID, p.Scenarios[i].Plan.Nodes)
	}
	for i := range p.NodeTemplates {
		n := []capstan.PlanNode{p.NodeTemplates[i].Node}
		nodes("node template "+p.NodeTemplates[i].Name, n)
		p.NodeTemplates[i].Node = n[0]
	}
	return problems
}

// checkChart holds a chart to its bounds: a Chart.yaml, clean relative
// paths, at most MaxChartFiles files of MaxChartBytes in all.
func checkChart(c *capstan.Chart) error {
	if _, ok := c.Files["Chart.yaml"]; !ok {
		return fmt.Errorf("has no Chart.yaml")
	}
	if len(c.Files) > MaxChartFiles {
		return fmt.Errorf("has %d files, more than %d", len(c.Files), MaxChartFiles)
	}
	total := 0
	names := make([]string, 0, len(c.Files))
	for name, data := range c.Files {
		names = append(names, name)
		total += len(data)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "" || path.IsAbs(name) || path.Clean(name) != name || strings.HasPrefix(name, "../") || name == ".." {
			return fmt.Errorf("file %q is not a clean path inside the chart", name)
		}
	}
	if total > MaxChartBytes {
		return fmt.Errorf("is %d bytes, more than %d", total, MaxChartBytes)
	}
	return nil
}
