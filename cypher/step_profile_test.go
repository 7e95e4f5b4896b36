package cypher_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
)

// TestTheStepStatementsDbHits PROFILEs one executor step (a node
// succeeded with its evidence, the next running, three events) of an
// operation that took a hundred steps before it, and holds the
// statement's db hits to a bound: a step must not grow with its
// operation's history, nor gain a lookup unseen.
func TestTheStepStatementsDbHits(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	org := "profile-step-" + capstan.NewID()[12:]
	op := startedOperation(t, s, org)
	require.NoError(t, op.Move(capstan.OperationRunning))
	for i := range 101 {
		ch := executorStep(op, i)
		if i < 100 {
			require.NoError(t, s.ApplyOperationChange(ctx, org, ch))
			continue
		}
		plan, err := cypher.ProfileStep(ctx, s, org, ch)
		require.NoError(t, err)
		var lines []string
		total := profileLines(plan, 0, &lines)
		t.Logf("db hits of one step: %d\n%s", total, strings.Join(lines, "\n"))
		require.LessOrEqual(t, total, int64(maxStepDbHits), "the step statement's db hits")
	}
}

// maxStepDbHits bounds the step statement (measured: 49).
const maxStepDbHits = 60

func executorStep(op *capstan.Operation, i int) *capstan.OperationChange {
	now := time.Now().UTC()
	done, next := fmt.Sprintf("n%06d", i), fmt.Sprintf("n%06d", i+1)
	return &capstan.OperationChange{Operation: op,
		NodeRuns: []capstan.OperationNodeRun{
			{NodeID: done, Status: capstan.NodeSucceeded, Attempts: 1, StartedAt: &now, FinishedAt: &now},
			{NodeID: next, Status: capstan.NodeRunning, Attempts: 1, StartedAt: &now}},
		Evidence: []capstan.Evidence{{ProducedBy: done, Item: "ok", Result: capstan.EvidencePassed, Source: map[string]any{"type": "sim"}, ObservedAt: now}},
		Events: []capstan.OperationEvent{
			{Type: "evidence.recorded", Actor: "executor", Payload: map[string]any{"node": done}},
			{Type: "node.succeeded", Actor: "executor", Payload: map[string]any{"node": done}},
			{Type: "node.running", Actor: "executor", Payload: map[string]any{"node": next}}},
	}
}

func profileLines(p neo4j.ProfiledPlan, depth int, lines *[]string) int64 {
	*lines = append(*lines, fmt.Sprintf("%*s%s rows=%d hits=%d", depth*2, "", p.Operator(), p.Records(), p.DbHits()))
	total := p.DbHits()
	for _, c := range p.Children() {
		total += profileLines(c, depth+1, lines)
	}
	return total
}
