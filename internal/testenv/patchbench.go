package testenv

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/service"
)

// bigPack is an editable scenario of n sim jobs in layers of ten, with a
// node template to insert.
func bigPack(n int) string {
	var b strings.Builder
	b.WriteString("id: big\nversion: 1.0.0\nnode_templates:\n  - name: noop\n    node: {type: job, title: No-op, job: {run: {runner: sim}}}\n")
	b.WriteString("scenarios:\n  - id: thing.big\n    action: big\n    target_resource_type: thing\n    editable: true\n    plan:\n      nodes:\n")
	for i := range n {
		after := ""
		if i >= 10 {
			after = fmt.Sprintf(", after: [n%03d]", i-10)
		}
		fmt.Fprintf(&b, "        - {id: n%03d, type: job, title: N%d%s, parameters: {i: %d}, job: {run: {runner: sim}, outputs: {evidence: [{name: ok, type: sim}]}}}\n", i, i, after, i)
	}
	return b.String()
}

// BenchmarkPatch proposes (and, outside prod with no gate touched,
// applies at once: the command's owner decides it as it is recorded) a patch to a running operation of a 500-node plan whose
// first half succeeded: validation, the next revision's snapshot, the
// operation switched to it and the events, in one commit. Patches alternate
// inserting a template node after a finished node and removing it, so the
// plan keeps its size. Reports p50 and p99.
func BenchmarkPatch(b *testing.B, store capstan.Store, org string) {
	wakes := live.NewWakes() // a proposal is a command: an owner applies it
	svc := service.New(live.Store{Store: store, Wakes: wakes}, nil)
	wakes.Listen(NewCommandOwner(svc, store).Wake)
	ctx := capstan.WithActor(context.Background(), &capstan.Actor{ID: "b", OrganizationID: org, Roles: []string{capstan.RoleAdmin}})
	if _, err := svc.InstallPackYAML(ctx, "big.yaml", []byte(bigPack(500))); err != nil {
		b.Fatal(err)
	}
	in, err := svc.CreateIntent(ctx, service.IntentInput{Action: "big", TargetResourceType: "thing", Mode: capstan.ModeAdvanced, Constraints: map[string]any{"environment": "dev"}})
	if err != nil {
		b.Fatal(err)
	}
	p, err := svc.PlanIntent(ctx, in.ID)
	if err != nil || p.Status != capstan.PlanReady {
		b.Fatalf("plan: %v %v", err, p.Problems)
	}
	op, err := svc.StartOperation(ctx, p.ID, "")
	if err != nil {
		b.Fatal(err)
	}
	if err := op.Move(capstan.OperationRunning); err != nil {
		b.Fatal(err)
	}
	ch := &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{{Type: "operation.running", Actor: "bench"}}}
	for i := range 250 {
		ch.NodeRuns = append(ch.NodeRuns, capstan.OperationNodeRun{NodeID: fmt.Sprintf("n%03d", i), Status: capstan.NodeSucceeded, Attempts: 1})
	}
	if err := store.ApplyOperationChange(ctx, org, ch); err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	rev := 1
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c := capstan.PlanChange{Op: capstan.ChangeInsertAfter, Node: "n100", Template: "noop", NodeID: "extra"}
		if i%2 == 1 {
			c = capstan.PlanChange{Op: capstan.ChangeRemove, Node: "extra"}
		}
		start := time.Now()
		pt, err := svc.ProposePlanPatch(ctx, op.ID, rev, []capstan.PlanChange{c}, "bench")
		took = append(took, time.Since(start))
		if err != nil || pt.Status != capstan.PatchApplied {
			b.Fatalf("patch %d: %v %v", i, err, pt)
		}
		rev = pt.AppliedRevision
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}

// BigPack is a pack of one editable scenario (action big, target thing)
// of n sim jobs in layers of ten.
func BigPack(n int) string { return bigPack(n) }
