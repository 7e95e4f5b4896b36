package planner

import (
	"testing"

	"github.com/capstan-dev/capstan"
)

func TestRunsCode(t *testing.T) {
	job := func(run capstan.RunSpec, probes ...capstan.Probe) *capstan.PlanNode {
		return &capstan.PlanNode{ID: "n", Type: capstan.NodeJob, Job: &capstan.JobContract{Run: run, Outputs: capstan.JobOutputs{Evidence: probes}}}
	}
	for _, c := range []struct {
		name string
		node *capstan.PlanNode
		code bool
	}{
		{"simulated", job(capstan.RunSpec{Runner: "sim"}, capstan.Probe{Name: "p", Type: "sim"}), false},
		{"reads Capstan's records", job(capstan.RunSpec{Runner: "sim"}, capstan.Probe{Name: "p", Type: "resource_state", Field: "health"}), false},
		{"shell", job(capstan.RunSpec{Runner: "shell", Script: "true"}), true},
		{"http", job(capstan.RunSpec{Runner: "http", URL: "http://x"}), true},
		{"ssh on a target", job(capstan.RunSpec{Runner: "ssh", Script: "true", Target: "host"}), true},
		{"a runner added later", job(capstan.RunSpec{Runner: "ansible"}), true},
		{"ssh_command probe", job(capstan.RunSpec{Runner: "sim"}, capstan.Probe{Name: "p", Type: "ssh_command", Target: "host", Script: "id"}), true},
		{"tcp probe", job(capstan.RunSpec{Runner: "sim"}, capstan.Probe{Name: "p", Type: "tcp", Target: "host", Port: 22}), true},
		{"file probe", job(capstan.RunSpec{Runner: "sim"}, capstan.Probe{Name: "p", Type: "file", Target: "host", Path: "/etc/passwd"}), true},
	} {
		if got := runsCode(c.node); got != c.code {
			t.Errorf("%s: runsCode = %v, want %v", c.name, got, c.code)
		}
	}
}
