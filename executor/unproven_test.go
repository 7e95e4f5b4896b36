package executor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestUnprovenReason(t *testing.T) {
	started := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	job := &capstan.PlanNode{ID: "n", Type: capstan.NodeJob}
	probeOnly := &capstan.PlanNode{ID: "n", Type: capstan.NodeManualIntervention}
	fix := capstan.Intervention{Actor: "alice", TargetNode: "n", At: started.Add(time.Minute)}
	old := capstan.Intervention{Actor: "bob", TargetNode: "n", At: started.Add(-time.Hour)}
	for _, tc := range []struct {
		name       string
		node       *capstan.PlanNode
		intervened []capstan.Intervention
		want       string
	}{
		{"a restart interrupted a job", job, nil, "needs attention: interrupted and its evidence does not prove it done; the job is not idempotent, so it is not re-run without an approval (x failed)"},
		{"an intervention on this attempt did not verify", job, []capstan.Intervention{fix}, "needs attention: the intervention alice recorded at 2026-12-05T10:01:00Z did not verify (x failed); fix the node and record another, or retry it"},
		{"an intervention of an earlier attempt is not this one's", job, []capstan.Intervention{old}, "needs attention: interrupted and its evidence does not prove it done; the job is not idempotent, so it is not re-run without an approval (x failed)"},
		{"a node with probes only", probeOnly, nil, "needs attention: x failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &state{intervened: map[string]capstan.Intervention{}}
			for _, iv := range tc.intervened {
				st.intervened[iv.TargetNode] = iv
			}
			run := capstan.OperationNodeRun{NodeID: "n", StartedAt: &started}
			require.Equal(t, tc.want, unprovenReason(st, run, tc.node, "x failed"))
		})
	}
}
