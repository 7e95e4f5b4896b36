package resolver

import (
	"context"
	"sort"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/graph/model"
	"github.com/capstan-dev/capstan/pack"
)

// planChanges decodes GraphQL change inputs; an inline spec arrives in
// the pack format and is checked against the pack schema.
func planChanges(in []model.PlanChangeInput) ([]capstan.PlanChange, error) {
	out := make([]capstan.PlanChange, 0, len(in))
	for _, e := range in {
		c := capstan.PlanChange{Op: e.Op, Node: deref(e.Node), Template: deref(e.Template), NodeID: deref(e.NodeID), Parameters: e.Parameters,
			Requirement: deref(e.Requirement), Provider: deref(e.Provider), Reason: deref(e.Reason)}
		if e.Spec != nil {
			n, err := pack.ParseNode(e.Spec)
			if err != nil {
				return nil, err
			}
			c.Spec = n
		}
		if e.Edge != nil {
			c.Edge = &capstan.Edge{From: e.Edge.From, To: e.Edge.To}
		}
		out = append(out, c)
	}
	return out, nil
}

func (r *Resolver) proposePlanPatch(ctx context.Context, in model.ProposePlanPatchInput) (*capstan.PlanPatch, error) {
	id, err := localID(in.Operation, capstan.KindOperation)
	if err != nil {
		return nil, err
	}
	changes, err := planChanges(in.Changes)
	if err != nil {
		return nil, err
	}
	return r.Service.ProposePlanPatch(ctx, id, in.BaseRevision, changes, in.Reason)
}

func (r *Resolver) decidePlanPatch(ctx context.Context, in model.DecidePlanPatchInput) (*capstan.PlanPatch, error) {
	id, err := localID(in.Patch, capstan.KindPatch)
	if err != nil {
		return nil, err
	}
	return r.Service.DecidePlanPatch(ctx, id, in.Approve, deref(in.Comment), in.Digest)
}

func (r *Resolver) withdrawPlanPatch(ctx context.Context, in model.WithdrawPlanPatchInput) (*capstan.PlanPatch, error) {
	id, err := localID(in.Patch, capstan.KindPatch)
	if err != nil {
		return nil, err
	}
	return r.Service.WithdrawPlanPatch(ctx, id, deref(in.Reason))
}

func (r *Resolver) revertPlanPatch(ctx context.Context, in model.RevertPlanPatchInput) (*capstan.PlanPatch, error) {
	id, err := localID(in.Patch, capstan.KindPatch)
	if err != nil {
		return nil, err
	}
	return r.Service.RevertPlanPatch(ctx, id, in.Reason)
}

func (r *Resolver) planPatch(ctx context.Context, gid string) (*capstan.PlanPatch, error) {
	id, err := localID(gid, capstan.KindPatch)
	if err != nil {
		return nil, err
	}
	p, err := r.Service.PlanPatch(ctx, id)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return nil, nil
	}
	return p, err
}

func (r *Resolver) operationPatches(ctx context.Context, op *capstan.Operation) ([]capstan.PlanPatch, error) {
	ps, err := r.Service.OperationPatches(ctx, op.ID)
	if err != nil {
		return nil, err
	}
	out := make([]capstan.PlanPatch, len(ps))
	for i, p := range ps {
		out[i] = *p
	}
	return out, nil
}

func (r *Resolver) planRevisions(ctx context.Context, p *capstan.Plan) ([]capstan.PlanRevision, error) {
	rs, err := r.Service.PlanRevisions(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	out := make([]capstan.PlanRevision, len(rs))
	for i, x := range rs {
		out[i] = *x
	}
	return out, nil
}

func (r *Resolver) planRevision(ctx context.Context, gid string, revision int) (*capstan.PlanRevision, error) {
	id, err := localID(gid, capstan.KindPlan)
	if err != nil {
		return nil, err
	}
	rev, err := r.Service.PlanRevision(ctx, id, revision)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return nil, nil
	}
	return rev, err
}

func (r *Resolver) planDiff(ctx context.Context, gid string, from, to int) (*capstan.PlanDiff, error) {
	id, err := localID(gid, capstan.KindPlan)
	if err != nil {
		return nil, err
	}
	return r.Service.PlanDiff(ctx, id, from, to)
}

func (r *Resolver) nodeTemplates(ctx context.Context) ([]capstan.NodeTemplate, error) {
	ts, err := r.Service.NodeTemplates(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]capstan.NodeTemplate, 0, len(ts))
	for _, t := range ts {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func outstanding(p *capstan.PlanPatch) []model.OutstandingApproval {
	left := p.Outstanding()
	out := []model.OutstandingApproval{}
	if p.Status != capstan.PatchProposed {
		return out
	}
	for _, rule := range p.Approvals {
		if n, ok := left[rule.Rule]; ok {
			out = append(out, model.OutstandingApproval{Rule: rule.Rule, Approvals: n})
		}
	}
	return out
}

func optionalInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
