package capstan_test

import (
	"testing"

	"github.com/capstan-dev/capstan"
)

func TestSimulated(t *testing.T) {
	job := func(runner string, probes ...string) *capstan.PlanNode {
		n := &capstan.PlanNode{ID: "n", Type: capstan.NodeJob, Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: runner}}}
		for _, p := range probes {
			n.Job.Outputs.Evidence = append(n.Job.Outputs.Evidence, capstan.Probe{Name: p, Type: p})
		}
		return n
	}
	for _, c := range []struct {
		name string
		node *capstan.PlanNode
		sim  bool
	}{
		{"a simulated job", job("sim", "command"), true},
		{"a real job with a simulated probe", job("ssh", "file", "sim"), true},
		{"a real job proven by real probes", job("ssh", "file", "service", "tcp"), false},
		{"a gate", &capstan.PlanNode{ID: "g", Type: capstan.NodeGate}, false},
		{"a verification by simulation", &capstan.PlanNode{ID: "v", Type: capstan.NodeVerification, Probes: []capstan.Probe{{Name: "s", Type: "sim"}}}, true},
	} {
		if got := c.node.Simulated(); got != c.sim {
			t.Errorf("%s: Simulated = %v, want %v", c.name, got, c.sim)
		}
	}
	if !(&capstan.Evidence{Source: map[string]any{"type": "sim"}}).Simulated() || (&capstan.Evidence{Source: map[string]any{"type": "file"}}).Simulated() {
		t.Error("evidence is simulated exactly when its source is the simulator's")
	}
}
