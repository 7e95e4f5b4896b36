package observe

import (
	"context"
	"slices"
	"time"

	"github.com/capstan-dev/capstan"
)

// DriftStore is what asking for drift gates reads and records.
type DriftStore interface {
	ListOperations(ctx context.Context, org string, f capstan.OperationFilter) ([]*capstan.Operation, int, error)
	GetPlan(ctx context.Context, org, id string) (*capstan.Plan, error)
	OperationRecords(ctx context.Context, org, opID string, kinds ...string) (*capstan.OperationRecords, error)
	GetPlanPatch(ctx context.Context, org, id string) (*capstan.PlanPatch, error)
	GetResourceByKey(ctx context.Context, org, key string) (*capstan.Resource, error)
	RecordCommand(ctx context.Context, org, opID string, c *capstan.Command) error
}

// DriftGates asks, of every unfinished operation of org whose plan binds
// the resource key an assessment found drifted, for a PlanPatch holding
// the first node that uses it and has not started behind a no_drift gate
// (capstan.DriftGate), authored by the assessor: a patch.propose command
// its owner judges like any proposal. A person approves the patch, and
// the gate then waits until the drift is repaired and an SRE approves
// it. An operation that already has such a proposal, or no node left
// that uses the resource, gets none; one operation's failure keeps no
// other from its gate.
func DriftGates(ctx context.Context, store DriftStore, org, key string, now time.Time) error {
	var failed error
	for _, status := range []capstan.OperationStatus{capstan.OperationRunning, capstan.OperationWaiting} {
		ops, _, err := store.ListOperations(ctx, org, capstan.OperationFilter{Status: status, Limit: 1000})
		if err != nil {
			return err
		}
		for _, op := range ops {
			if err := driftGate(ctx, store, org, op, key, now); err != nil {
				failed = err
			}
		}
	}
	return failed
}

// driftGate asks op's owner for the gate, when op needs one.
func driftGate(ctx context.Context, store DriftStore, org string, op *capstan.Operation, key string, now time.Time) error {
	plan, err := store.GetPlan(ctx, org, op.PlanID)
	if err != nil {
		return err
	}
	recs, err := store.OperationRecords(ctx, org, op.ID, capstan.RecordNodeRun)
	if err != nil {
		return err
	}
	started := map[string]bool{}
	for _, r := range recs.NodeRuns {
		started[r.NodeID] = r.Status != capstan.NodePending
	}
	r, err := store.GetResourceByKey(ctx, org, key)
	if err != nil {
		return err
	}
	drift := capstan.UnresolvedDrift([]*capstan.Resource{r})
	if len(drift) == 0 {
		return nil // repaired meanwhile
	}
	change, ok := capstan.DriftGate(plan, started, key, key+" drifted")
	if !ok {
		return nil
	}
	for _, id := range op.OpenPatches {
		p, err := store.GetPlanPatch(ctx, org, id)
		if err != nil {
			return err
		}
		if p.Author == capstan.AssessorActor && slices.ContainsFunc(p.Changes, func(c capstan.PlanChange) bool { return c.NodeID == change.NodeID }) {
			return nil // proposed already
		}
	}
	for _, c := range recs.PendingCommands() {
		if p := c.Args.Proposal; p != nil && p.Author == capstan.AssessorActor && slices.ContainsFunc(p.Changes, func(c capstan.PlanChange) bool { return c.NodeID == change.NodeID }) {
			return nil // asked already
		}
	}
	return store.RecordCommand(ctx, org, op.ID, &capstan.Command{ID: capstan.NewID(), Kind: capstan.CommandProposePatch,
		Actor: capstan.Actor{ID: capstan.AssessorActor, OrganizationID: org}, At: now.UTC(), Status: capstan.CommandPending,
		Args: capstan.CommandArgs{Proposal: &capstan.PatchProposal{Author: capstan.AssessorActor, Base: plan.Revision, Changes: []capstan.PlanChange{change}, Reason: drift[0]}}})
}
