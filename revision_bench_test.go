package capstan_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/capstan-dev/capstan"
)

// bigRevisionPlan is a 500-node plan shaped like testenv.BenchmarkPatch's.
func bigRevisionPlan() *capstan.Plan {
	p := &capstan.Plan{Meta: capstan.Meta{ID: "big"}, IntentID: "i", ScenarioRef: "big@1.0.0", Status: capstan.PlanRunning, Revision: 1}
	for i := range 500 {
		id := fmt.Sprintf("n%03d", i)
		p.Nodes = append(p.Nodes, capstan.PlanNode{ID: id, Type: capstan.NodeJob, Title: "N", Parameters: map[string]any{"i": i},
			Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}, Outputs: capstan.JobOutputs{Evidence: []capstan.Probe{{Name: "ok", Type: "sim"}}}}})
		if i >= 10 {
			p.Edges = append(p.Edges, capstan.Edge{From: fmt.Sprintf("n%03d", i-10), To: id})
		}
	}
	return p
}

// BenchmarkPlanJSONFloor is the floor under a patch of a 500-node plan on
// the embedded store: one decode and one encode of the plan's JSON, and
// one digest of its content. Applying a patch makes one read and four
// encodings (the next revision's digest, its verification, the snapshot,
// the plan record).
func BenchmarkPlanJSONFloor(b *testing.B) {
	p := bigRevisionPlan()
	data, _ := json.Marshal(p)
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var q capstan.Plan
			if err := json.Unmarshal(data, &q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("digest", func(b *testing.B) {
		for b.Loop() {
			_ = capstan.ContentOf(p).Digest()
		}
	})
	b.ReportMetric(float64(len(data)), "bytes")
}
