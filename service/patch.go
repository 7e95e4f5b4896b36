package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
	"github.com/capstan-dev/capstan/planner"
	"github.com/capstan-dev/capstan/policy"
)

// A PlanPatch changes a running operation's plan (invariant 4): it is
// judged by the same validator as editPlan when proposed, needs the
// approvals its rules name, and applies in one commit with its last
// approval — the next revision, the operation switched to it, the node
// runs it moves, the events — or not at all.

// proposal is a patch about to be proposed.
type proposal struct {
	author    string
	roles     []string
	mayAuthor bool
	opID      string
	base      int
	changes   []capstan.PlanChange
	reason    string
	reverts   string
	analysis  *capstan.PatchAnalysis
	// restorable are earlier nodes a revert may bring back, reverting the
	// nodes it may remove (planner.ChangeSet.Restorable, Reverting).
	restorable []capstan.PlanNode
	reverting  map[string]bool
}

// scene is one read of what deciding on an operation's patch needs.
type scene struct {
	op   *capstan.Operation
	plan *capstan.Plan
	in   *capstan.Intent
	recs *capstan.OperationRecords
	runs map[string]capstan.OperationNodeRun
}

func (s *Service) scene(ctx context.Context, org, opID string) (*scene, error) {
	op, err := s.Store.GetOperation(ctx, org, opID)
	if err != nil {
		return nil, err
	}
	plan, err := s.Store.GetPlan(ctx, org, op.PlanID)
	if err != nil {
		return nil, err
	}
	in, err := s.Store.GetIntent(ctx, org, op.IntentID)
	if err != nil {
		return nil, err
	}
	recs, err := s.Store.OperationRecords(ctx, org, opID)
	if err != nil {
		return nil, err
	}
	runs := make(map[string]capstan.OperationNodeRun, len(recs.NodeRuns))
	for _, r := range recs.NodeRuns {
		runs[r.NodeID] = r
	}
	if plan.Digest == "" { // a plan stored before revisions had digests
		if r, err := s.Store.GetPlanRevision(ctx, org, plan.ID, plan.Revision); err == nil {
			plan.Digest = r.Digest
		} else {
			plan.Digest = capstan.ContentOf(plan).Digest()
		}
	}
	return &scene{op: op, plan: plan, in: in, recs: recs, runs: runs}, nil
}

// ProposePlanPatch proposes changes to a running operation's plan, made on
// the plan revision the proposer saw. A proposal the validator refuses
// leaves nothing behind; one that needs no approval applies at once.
func (s *Service) ProposePlanPatch(ctx context.Context, opID string, baseRevision int, changes []capstan.PlanChange, reason string) (*capstan.PlanPatch, error) {
	a, err := requireAction(ctx, capstan.ActionProposePatch)
	if err != nil {
		return nil, err
	}
	return s.Propose(ctx, a.OrganizationID, proposal{author: a.ID, roles: a.Roles, mayAuthor: mayAuthorJobs(a), opID: opID, base: baseRevision,
		changes: changes, reason: reason})
}

// Propose proposes a patch for an author the caller vouches for (a
// person through ProposePlanPatch or RevertPlanPatch): a command the
// operation's owner decides, waited for; the patch it made is answered.
func (s *Service) Propose(ctx context.Context, org string, pr proposal) (*capstan.PlanPatch, error) {
	if strings.TrimSpace(pr.reason) == "" {
		return nil, capstan.Errorf(capstan.EINVALID, "a patch needs a reason")
	}
	if err := s.refuseSecretsInChanges(ctx, org, pr.changes); err != nil {
		return nil, err // said at once, and a secret's value is never recorded, even in the command
	}
	c, err := s.submit(ctx, pr.opID, capstan.CommandProposePatch, capstan.CommandArgs{Proposal: pr.command()})
	if err != nil {
		return nil, err
	}
	return s.Store.GetPlanPatch(ctx, org, c.Result)
}

// command is the proposal as a patch.propose command carries it.
func (pr proposal) command() *capstan.PatchProposal {
	out := &capstan.PatchProposal{Author: pr.author, Roles: pr.roles, MayAuthor: pr.mayAuthor, Base: pr.base, Changes: pr.changes, Reason: pr.reason,
		Reverts: pr.reverts, Analysis: pr.analysis, Restorable: pr.restorable}
	for id := range pr.reverting {
		out.Reverting = append(out.Reverting, id)
	}
	slices.Sort(out.Reverting)
	return out
}

// proposalOf is the proposal a patch.propose command carries, for opID.
func proposalOf(opID string, p *capstan.PatchProposal) proposal {
	pr := proposal{author: p.Author, roles: p.Roles, mayAuthor: p.MayAuthor, opID: opID, base: p.Base, changes: p.Changes, reason: p.Reason,
		reverts: p.Reverts, analysis: p.Analysis, restorable: p.Restorable}
	if len(p.Reverting) > 0 {
		pr.reverting = map[string]bool{}
		for _, id := range p.Reverting {
			pr.reverting[id] = true
		}
	}
	return pr
}

// decideProposal decides a patch.propose command for the operation's
// owner: the proposal, or, for an analyzer's that breaks a rule, the
// record of its refusal (analysis.proposal_refused), so what it suggested
// is never lost and never applied.
func (s *Service) decideProposal(ctx context.Context, org string, pr proposal) (*capstan.OperationChange, string, error) {
	if strings.TrimSpace(pr.reason) == "" {
		return nil, "", capstan.Errorf(capstan.EINVALID, "a patch needs a reason")
	}
	ch, err := s.propose(ctx, org, pr)
	switch code := capstan.ErrorCode(err); {
	case err == nil:
		return ch, ch.Patches[0].ID, nil
	case pr.analysis != nil && (code == capstan.EINVALID || code == capstan.EFORBIDDEN):
		op, gerr := s.Store.GetOperation(ctx, org, pr.opID)
		if gerr != nil {
			return nil, "", gerr
		}
		return &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{event.Record(pr.author,
			event.Analysis{Node: pr.analysis.Node, Diagnosis: pr.analysis.Diagnosis, Problems: capstan.ErrorDetails(err)})}}, "", nil
	}
	return nil, "", err
}

func (s *Service) propose(ctx context.Context, org string, pr proposal) (*capstan.OperationChange, error) {
	sc, err := s.scene(ctx, org, pr.opID)
	if err != nil {
		return nil, err
	}
	if sc.op.Status.Terminal() {
		return nil, capstan.Errorf(capstan.ECONFLICT, "%s is %s: a finished operation takes no patch", capstan.Named("operation", pr.opID), sc.op.Status)
	}
	if pr.base != sc.plan.Revision {
		return nil, capstan.Errorf(capstan.ECONFLICT, "the plan is at revision %d, the patch was made on revision %d: reload and propose again", sc.plan.Revision, pr.base)
	}
	pc, err := s.packContext(ctx, org)
	if err != nil {
		return nil, err
	}
	if err := s.agentSetsNoSecret(ctx, org, pr.author, pr.changes, pc.templates); err != nil {
		return nil, err
	}
	pr.changes = planner.PinTemplates(pr.changes, pc.templates)
	res, verdicts, err := s.judge(ctx, org, sc, pr, pr.changes)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	p := capstan.PlanPatch{Meta: capstan.Meta{ID: capstan.NewID()}, OperationID: sc.op.ID, PlanID: sc.plan.ID, BaseRevision: sc.plan.Revision,
		BaseDigest: sc.plan.Digest, Digest: capstan.PatchDigest(sc.plan.Digest, pr.changes), Author: pr.author, AuthorRoles: pr.roles, Reason: pr.reason,
		Changes: pr.changes, Status: capstan.PatchProposed, Reverts: pr.reverts, Analysis: pr.analysis,
		Approvals: policyApprovals(capstan.DefaultApprovalRules(s.Production.Is(sc.in.Environment()), pr.author, res.Gates), verdicts)}
	ch := &capstan.OperationChange{Operation: sc.op, Events: []capstan.OperationEvent{recordAt(pr.author, now, event.Patch{What: "proposed", Patch: capstan.PatchGID(p.ID), Digest: p.Digest,
		BaseRevision: p.BaseRevision, Changes: len(p.Changes), Reason: p.Reason, Approvals: approvalRuleNames(p.Approvals)})}}
	if p.Approved() {
		if err := s.apply(ctx, org, sc, &p, res, pr.author, ch); err != nil {
			return nil, err
		}
	} else {
		sc.op.OpenPatches = append(sc.op.OpenPatches, p.ID)
	}
	ch.Patches = append([]capstan.PlanPatch{p}, ch.Patches...)
	return ch, nil
}

// judge runs the change validator on the scene's current state. A patch
// is governed once, when proposed: judged again (on approval), only
// whether it still applies counts, so every governance rule is waived.
func (s *Service) judge(ctx context.Context, org string, sc *scene, pr proposal, changes []capstan.PlanChange) (planner.ChangeResult, []policy.PatchVerdict, error) {
	cs, verdicts, err := s.changeSet(ctx, org, changer{id: pr.author, roles: pr.roles, mayAuthor: pr.mayAuthor}, sc.plan, sc.in, changes)
	if err != nil {
		return planner.ChangeResult{}, nil, err
	}
	cs.Started, cs.Runs, cs.Restorable, cs.Reverting = true, sc.runs, pr.restorable, pr.reverting
	res := planner.ApplyChanges(cs)
	return res, verdicts, res.Err("plan patch rejected")
}

// rejudge judges a proposed patch again on the scene, as its author with
// the roles they proposed it with, under the policies installed now: what
// applies is what the approvers saw, still allowed.
func (s *Service) rejudge(ctx context.Context, org string, sc *scene, p *capstan.PlanPatch) (planner.ChangeResult, error) {
	res, _, err := s.rejudgeWith(ctx, org, sc, p)
	return res, err
}

// rejudgeWith is rejudge with the patch policies that hold now.
func (s *Service) rejudgeWith(ctx context.Context, org string, sc *scene, p *capstan.PlanPatch) (planner.ChangeResult, []policy.PatchVerdict, error) {
	author := &capstan.Actor{ID: p.Author, Roles: p.AuthorRoles}
	by := changer{id: p.Author, roles: p.AuthorRoles, mayAuthor: !capstan.IsAgent(p.Author) && mayAuthorJobs(author)}
	cs, verdicts, err := s.changeSet(ctx, org, by, sc.plan, sc.in, p.Changes)
	if err != nil {
		return planner.ChangeResult{}, nil, err
	}
	cs.Started, cs.Runs = true, sc.runs
	if p.Reverts != "" {
		if cs.Restorable, cs.Reverting, err = s.revertContext(ctx, org, p.Reverts); err != nil {
			return planner.ChangeResult{}, nil, err
		}
	}
	res := planner.ApplyChanges(cs)
	return res, verdicts, res.Err("plan patch rejected")
}

// apply adds an approved patch's application to ch: the next revision,
// the operation on it, the node runs it moves, gate decisions it
// dismisses, the other proposals it makes stale, and the events.
func (s *Service) apply(ctx context.Context, org string, sc *scene, p *capstan.PlanPatch, res planner.ChangeResult, actor string, ch *capstan.OperationChange) error {
	now := s.Now().UTC()
	next, err := planner.Revise(sc.plan, res, p.Changes, capstan.RevisionSource{Actor: actor, At: now, Kind: capstan.RevisionPatch, PatchID: p.ID})
	if err != nil {
		return err
	}
	if err := p.Move(capstan.PatchApplied); err != nil {
		return err
	}
	p.AppliedRevision, p.ClosedAt = next.Revision, &now
	ch.Plan = next
	sc.op.PlanRevision = next.Revision
	dropOpen(sc.op, p.ID)
	ch.Events = append(ch.Events,
		recordAt(actor, now, event.Patch{What: "applied", Patch: capstan.PatchGID(p.ID), Revision: next.Revision, Digest: next.Digest}),
		recordAt(actor, now, event.PlanRevised{Revision: next.Revision, Digest: next.Digest, Parent: sc.plan.Digest, Patch: capstan.PatchGID(p.ID)}))
	if err := moveRuns(sc, res.Runs, next.Revision, actor, ch); err != nil {
		return err
	}
	dismissGateDecisions(sc, next, actor, ch)
	return s.staleOthers(ctx, org, sc, p, next.Revision, ch)
}

// moveRuns puts the runs a patch moves into ch, each move checked.
func moveRuns(sc *scene, runs []capstan.OperationNodeRun, revision int, actor string, ch *capstan.OperationChange) error {
	for _, r := range runs {
		old, ok := sc.runs[r.NodeID]
		if ok {
			if err := old.Move(r.Status); err != nil {
				return err
			}
		}
		typ := "reset"
		if r.Status == capstan.NodeSkipped {
			typ = "skipped"
		}
		ch.NodeRuns = append(ch.NodeRuns, r)
		ch.Events = append(ch.Events, event.Record(actor, event.Node{What: typ, Node: r.NodeID, Revision: revision, Reason: r.Error}))
	}
	return nil
}

// dismissGateDecisions dismisses every standing decision on a waiting gate
// whose upstream the new revision changed: the approver saw something else.
func dismissGateDecisions(sc *scene, next *capstan.Plan, actor string, ch *capstan.OperationChange) {
	for _, g := range sc.recs.Gates {
		if g.Status != capstan.GateWaiting || next.Node(g.NodeID) == nil {
			continue
		}
		digest := capstan.UpstreamDigest(next, g.NodeID)
		var dismissed []string
		for i := range g.Decisions {
			if d := &g.Decisions[i]; !d.Dismissed && d.Digest != digest {
				d.Dismissed = true
				dismissed = append(dismissed, d.Actor)
			}
		}
		if len(dismissed) > 0 {
			ch.Gates = append(ch.Gates, g)
			ch.Events = append(ch.Events, event.Record(actor, event.Gate{What: "approval_invalidated", Node: g.NodeID, Actors: dismissed, Digest: digest, Revision: next.Revision}))
		}
	}
}

// staleOthers makes every other proposal of the operation stale: they
// were made on a revision that is no longer the plan's.
func (s *Service) staleOthers(ctx context.Context, org string, sc *scene, applied *capstan.PlanPatch, revision int, ch *capstan.OperationChange) error {
	for _, id := range sc.op.OpenPatches {
		o, err := s.Store.GetPlanPatch(ctx, org, id)
		if err != nil {
			return err
		}
		if err := closePatch(o, capstan.PatchStale, fmt.Sprintf("%s made revision %d: this one was made on revision %d", capstan.Named("plan patch", applied.ID), revision, o.BaseRevision), s.Now()); err != nil {
			return err
		}
		ch.Patches = append(ch.Patches, *o)
		ch.Events = append(ch.Events, event.Record("capstan", event.Patch{What: "stale", Patch: capstan.PatchGID(o.ID), Reason: o.ClosedReason}))
	}
	sc.op.OpenPatches = nil
	return nil
}

// closePatch moves a proposed patch to a closing status, saying why.
func closePatch(p *capstan.PlanPatch, to capstan.PatchStatus, reason string, now time.Time) error {
	if err := p.Move(to); err != nil {
		return capstan.Errorf(capstan.ECONFLICT, "%s is %s: only a proposed patch is %s", capstan.Named("plan patch", p.ID), p.Status, to)
	}
	t := now.UTC()
	p.ClosedReason, p.ClosedAt = reason, &t
	return nil
}

func approvalRuleNames(rs []capstan.ApprovalRule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Rule
	}
	return out
}

// DecidePlanPatch records a person's decision on a proposed patch, bound
// to the digest they saw. A rejection closes it; the approval that meets
// its last rule applies it, in the same commit. A patch that no longer
// applies to the operation as it stands becomes stale instead (CONFLICT).
func (s *Service) DecidePlanPatch(ctx context.Context, patchID string, approve bool, comment, digest string) (*capstan.PlanPatch, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.Store.GetPlanPatch(ctx, a.OrganizationID, patchID)
	if err != nil {
		return nil, err
	}
	if err := p.CheckDecider(a, digest); err != nil {
		return nil, err // what needs no state of the operation: said at once
	}
	_, err = s.submit(ctx, p.OperationID, capstan.CommandDecidePatch, capstan.CommandArgs{Patch: patchID, Approve: approve, Comment: comment, Digest: digest})
	if err != nil && capstan.ErrorCode(err) != capstan.ECONFLICT {
		return nil, err
	}
	decided, gerr := s.Store.GetPlanPatch(ctx, a.OrganizationID, patchID)
	if gerr != nil {
		return nil, gerr
	}
	if err != nil && decided.Status != capstan.PatchStale {
		return nil, err
	}
	return decided, err // a patch found stale is answered with its CONFLICT
}

// decide decides a patch decision for the operation's owner: the change,
// and, for a patch found stale, the change that says so with CONFLICT.
func (s *Service) decide(ctx context.Context, a *capstan.Actor, patchID string, approve bool, comment, digest string) (*capstan.OperationChange, error) {
	org := a.OrganizationID
	p, err := s.Store.GetPlanPatch(ctx, org, patchID)
	if err != nil {
		return nil, err
	}
	if err := p.CheckDecider(a, digest); err != nil {
		return nil, err
	}
	sc, err := s.scene(ctx, org, p.OperationID)
	if err != nil {
		return nil, err
	}
	if err := StarterMayApprovePatch(sc.op.Actor, a.ID, approve, s.Production.Is(sc.in.Environment()), p); err != nil {
		return nil, err
	}
	ch := &capstan.OperationChange{Operation: sc.op}
	why, j, err := s.noLongerApplies(ctx, org, sc, p)
	if err != nil {
		return nil, err
	}
	if why != "" {
		if err := closePatch(p, capstan.PatchStale, why, s.Now()); err != nil {
			return nil, err
		}
		dropOpen(sc.op, p.ID)
		ch.Patches = []capstan.PlanPatch{*p}
		ch.Events = []capstan.OperationEvent{event.Record(a.ID, event.Patch{What: "stale", Patch: capstan.PatchGID(p.ID), Reason: why})}
		return ch, capstan.Errorf(capstan.ECONFLICT, "the patch no longer applies and is now stale: %s", why)
	}
	now := s.Now().UTC()
	// Who must approve is decided again on the patch as it would apply now:
	// a policy installed meanwhile may ask for more (never for less: the
	// rules it was proposed with stay).
	res := j.res
	p.Approvals = mergeRules(p.Approvals, policyApprovals(capstan.DefaultApprovalRules(s.Production.Is(sc.in.Environment()), p.Author, res.Gates), j.verdicts))
	roles := slices.Clone(a.Roles)
	p.Decisions = append(p.Decisions, capstan.PatchDecision{Actor: a.ID, Roles: roles, Approve: approve, Comment: comment, Digest: p.Digest, At: now})
	ch.Events = append(ch.Events, recordAt(a.ID, now, event.Patch{What: "decided", Patch: capstan.PatchGID(p.ID), Approve: &approve, Digest: p.Digest}))
	switch {
	case !approve:
		if err := closePatch(p, capstan.PatchRejected, "rejected by "+a.ID, now); err != nil {
			return nil, err
		}
		dropOpen(sc.op, p.ID)
		ch.Events = append(ch.Events, recordAt(a.ID, now, event.Patch{What: "rejected", Patch: capstan.PatchGID(p.ID)}))
	case p.Approved():
		if err := s.apply(ctx, org, sc, p, res, a.ID, ch); err != nil {
			return nil, err
		}
	}
	ch.Patches = append([]capstan.PlanPatch{*p}, ch.Patches...)
	return ch, nil
}

// noLongerApplies says why a proposed patch cannot apply to the operation
// as it stands ("" when it can, with the judgement it applies by): the
// operation ended, another revision was made, a node it changes started or
// finished, or a rule now refuses it. An error that is not the validator's
// (a store that failed) is returned, not taken as a reason.
func (s *Service) noLongerApplies(ctx context.Context, org string, sc *scene, p *capstan.PlanPatch) (string, judgement, error) {
	if sc.op.Status.Terminal() {
		return fmt.Sprintf("the operation is %s", sc.op.Status), judgement{}, nil
	}
	if sc.plan.Revision != p.BaseRevision || sc.plan.Digest != p.BaseDigest {
		return fmt.Sprintf("the plan is at revision %d; the patch was made on revision %d", sc.plan.Revision, p.BaseRevision), judgement{}, nil
	}
	res, verdicts, err := s.rejudgeWith(ctx, org, sc, p)
	switch code := capstan.ErrorCode(err); {
	case err == nil:
		return "", judgement{res: res, verdicts: verdicts}, nil
	case len(res.Problems) == 0 && (code == capstan.ENOTFOUND || code == capstan.EINVALID):
		return capstan.ErrorMessage(err), judgement{}, nil // what it names is gone or no longer valid (a capability, a policy)
	case len(res.Problems) == 0:
		return "", judgement{}, err
	}
	why := make([]string, len(res.Problems))
	for i, pr := range res.Problems {
		why[i] = pr.String()
	}
	return strings.Join(why, "; "), judgement{}, nil
}

// judgement is a patch judged again: what it would make, and the patch
// policies that hold for it now.
type judgement struct {
	res      planner.ChangeResult
	verdicts []policy.PatchVerdict
}

// WithdrawPlanPatch withdraws a proposed patch: its author may, and so may
// a platform admin (an analyzer's proposal is withdrawn by any proposer).
func (s *Service) WithdrawPlanPatch(ctx context.Context, patchID, reason string) (*capstan.PlanPatch, error) {
	a, err := requireAction(ctx, capstan.ActionWithdrawPatch)
	if err != nil {
		return nil, err
	}
	p, err := s.Store.GetPlanPatch(ctx, a.OrganizationID, patchID)
	if err != nil {
		return nil, err
	}
	if err := MayWithdraw(a, p); err != nil {
		return nil, err
	}
	if _, err := s.submit(ctx, p.OperationID, capstan.CommandWithdrawPatch, capstan.CommandArgs{Patch: patchID, Reason: reason}); err != nil {
		return nil, err
	}
	return s.Store.GetPlanPatch(ctx, a.OrganizationID, patchID)
}

// withdraw decides a withdrawal for the operation's owner.
func (s *Service) withdraw(ctx context.Context, a *capstan.Actor, patchID, reason string) (*capstan.OperationChange, error) {
	org := a.OrganizationID
	p, err := s.Store.GetPlanPatch(ctx, org, patchID)
	if err != nil {
		return nil, err
	}
	if err := MayWithdraw(a, p); err != nil {
		return nil, err
	}
	op, err := s.Store.GetOperation(ctx, org, p.OperationID)
	if err != nil {
		return nil, err
	}
	if err := closePatch(p, capstan.PatchWithdrawn, orText(reason, "withdrawn by "+a.ID), s.Now()); err != nil {
		return nil, err
	}
	dropOpen(op, p.ID)
	return &capstan.OperationChange{Operation: op, Patches: []capstan.PlanPatch{*p},
		Events: []capstan.OperationEvent{event.Record(a.ID, event.Patch{What: "withdrawn", Patch: capstan.PatchGID(p.ID), Reason: p.ClosedReason})}}, nil
}

func orText(s, d string) string {
	if strings.TrimSpace(s) == "" {
		return d
	}
	return s
}

// ProposeFromAnalysis proposes an analyzer's changes as a PlanPatch
// authored ai-agent:<analyzer>, with the analysis it rests on; it always
// needs a person's approval (agent-needs-person). A proposal the validator
// refuses is recorded in the timeline (analysis.proposal_refused), so
// what the analyzer suggested is never lost and never applied.
func (s *Service) ProposeFromAnalysis(ctx context.Context, org, opID string, base int, node string, a capstan.Analysis, evidence []string) error {
	author := a.Analyzer
	if !capstan.IsAgent(author) {
		author = capstan.AgentPrefix + author
	}
	pa := &capstan.PatchAnalysis{Analyzer: author, Node: node, Diagnosis: a.Diagnosis, Missing: a.Missing, Findings: a.Findings, Evidence: evidence,
		DroppedFindings: a.DroppedFindings, Model: a.Model}
	pr := proposal{author: author, opID: opID, base: base, changes: a.ProposedPatch, reason: a.Diagnosis, analysis: pa}
	return s.send(ctx, org, opID, author, capstan.CommandProposePatch, capstan.CommandArgs{Proposal: pr.command()})
}

// agentSetsNoSecret refuses an analyzer's patch that hands a job a
// secret: a change that sets a secret: reference, inserts a template
// whose node carries one, or rebinds a requirement to a provider whose
// attributes hold one (a job reads its bindings' attributes, references
// resolved). The job would run with that secret's value (the analyzer's
// own API key, a database password) on the word of a model. Only a
// person puts a secret into a plan, through an edit or their own patch.
func (s *Service) agentSetsNoSecret(ctx context.Context, org, author string, changes []capstan.PlanChange, templates map[string]*capstan.NodeTemplate) error {
	if !capstan.IsAgent(author) {
		return nil
	}
	var p capstan.Problems
	for i, c := range changes {
		refs := c.SecretReferences()
		if t := templates[c.Template]; c.Template != "" && t != nil {
			node := t.Node
			refs = append(refs, capstan.PlanChange{Spec: &node}.SecretReferences()...)
		}
		if c.Op == capstan.ChangeRebind && c.Provider != "" {
			r, err := s.Store.GetResourceByKey(ctx, org, c.Provider)
			if err != nil && capstan.ErrorCode(err) != capstan.ENOTFOUND {
				return err
			}
			if r != nil {
				for _, pc := range r.ProvidedCapabilities {
					refs = append(refs, capstan.PlanChange{Parameters: pc.Attributes}.SecretReferences()...)
				}
			}
		}
		for _, ref := range refs {
			p.Addf("change %d (%s) hands the job %s: an analyzer never puts a secret into a plan; a person does", i+1, c.Op, ref)
		}
	}
	if len(p) == 0 {
		return nil
	}
	err := capstan.Errorf(capstan.EFORBIDDEN, "%s's patch is refused: %s", author, strings.Join(p, "; "))
	err.Details = p
	return err
}

// AnalysisFailed records why the analysis of a failed node gave nothing
// to propose (analysis.failed, by the analyzer): the error's code and
// message, the secrets of the organization masked by the store.
func (s *Service) AnalysisFailed(ctx context.Context, org, opID, node, analyzer string, reason error) error {
	why := capstan.ErrorMessage(reason)
	if code := capstan.ErrorCode(reason); code != "" {
		why = code + ": " + why
	}
	problems := append([]string{why}, capstan.ErrorDetails(reason)...)
	err := s.send(ctx, org, opID, analyzer, capstan.CommandAnalysisFailed, capstan.CommandArgs{Node: node, Problems: problems})
	if capstan.ErrorCode(err) != capstan.ECONFLICT || !s.ended(ctx, org, opID) {
		return err
	}
	// Ended meanwhile (the failure it analyzed may have ended it): no
	// owner runs it, and its timeline still says why no proposal came.
	return onFreshState(func() error {
		ch, err := s.analysisFailed(ctx, org, opID, analyzer, node, problems)
		if err != nil {
			return err
		}
		return s.commit(ctx, org, ch)
	})
}

// analysisFailed decides an analysis.failed command: its record, even
// once the operation ended (the failure it analyzed may have ended it).
func (s *Service) analysisFailed(ctx context.Context, org, opID, analyzer, node string, problems []string) (*capstan.OperationChange, error) {
	op, err := s.Store.GetOperation(ctx, org, opID)
	if err != nil {
		return nil, err
	}
	return &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{event.Record(analyzer,
		event.Analysis{Node: node, Problems: problems, Failed: true})}}, nil
}

// recheckPatches decides a recheck of the operation's proposals (its
// owner's own, after nodes moved: executor/assist.go): the change that marks
// stale the proposals that no longer apply (nil when none), and the
// failure to judge one (the others are judged all the same).
func (s *Service) recheckPatches(ctx context.Context, org, opID string) (*capstan.OperationChange, error) {
	sc, err := s.scene(ctx, org, opID)
	if err != nil || len(sc.op.OpenPatches) == 0 {
		return nil, err
	}
	ch := &capstan.OperationChange{Operation: sc.op}
	open := slices.Clone(sc.op.OpenPatches)
	var failed error // one patch that cannot be judged now keeps no other from being judged
	for _, id := range open {
		p, err := s.Store.GetPlanPatch(ctx, org, id)
		if err != nil {
			failed = err
			continue
		}
		why, _, err := s.noLongerApplies(ctx, org, sc, p)
		if err != nil {
			failed = err
			continue
		}
		if why == "" {
			continue
		}
		if err := closePatch(p, capstan.PatchStale, why, s.Now()); err != nil {
			return nil, err
		}
		dropOpen(sc.op, p.ID)
		ch.Patches = append(ch.Patches, *p)
		ch.Events = append(ch.Events, event.Record("capstan", event.Patch{What: "stale", Patch: capstan.PatchGID(p.ID), Reason: why}))
	}
	if len(ch.Patches) == 0 {
		return nil, failed
	}
	return ch, nil // what could be judged is recorded; the next recheck judges the rest
}

// mergeRules adds to rules those of more that it does not name yet.
func mergeRules(rules, more []capstan.ApprovalRule) []capstan.ApprovalRule {
	out := slices.Clone(rules)
	for _, r := range more {
		if !slices.ContainsFunc(out, func(x capstan.ApprovalRule) bool { return x.Rule == r.Rule }) {
			out = append(out, r)
		}
	}
	return out
}

// dropOpen takes a patch off its operation's open proposals.
func dropOpen(op *capstan.Operation, patchID string) {
	op.OpenPatches = slices.DeleteFunc(slices.Clone(op.OpenPatches), func(id string) bool { return id == patchID })
}

// recordAt records e by actor at t.
func recordAt(actor string, t time.Time, e event.Event) capstan.OperationEvent {
	ev := event.Record(actor, e)
	ev.At = t
	return ev
}
