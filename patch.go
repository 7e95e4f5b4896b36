package capstan

import (
	"slices"
	"strings"
	"time"
)

// PatchStatus is where a PlanPatch stands. An approved patch applies in
// the same commit as its last needed approval, so approval is not a
// status of its own: a patch is proposed until it is applied, rejected,
// withdrawn or stale.
type PatchStatus string

const (
	PatchProposed  PatchStatus = "proposed"
	PatchApplied   PatchStatus = "applied"
	PatchRejected  PatchStatus = "rejected"
	PatchWithdrawn PatchStatus = "withdrawn"
	PatchStale     PatchStatus = "stale"
)

// PatchStatuses is the PlanPatch state machine.
var PatchStatuses = StateMachine[PatchStatus]{Name: "plan patch", Moves: map[PatchStatus][]PatchStatus{
	PatchProposed: {PatchApplied, PatchRejected, PatchWithdrawn, PatchStale},
}}

// PlanPatch is a proposed change set to a running plan (invariant 4). It
// applies only to its base revision, and only once every approval its
// rules ask for was given on its digest.
type PlanPatch struct {
	Meta
	OperationID  string `json:"operation_id"`
	PlanID       string `json:"plan_id"`
	BaseRevision int    `json:"base_revision"`
	BaseDigest   string `json:"base_digest"`
	// Digest binds decisions to what was proposed: PatchDigest(BaseDigest, Changes).
	Digest string `json:"digest"`
	Author string `json:"author"`
	// AuthorRoles are the author's roles when proposing: the patch is
	// judged again with them when it applies.
	AuthorRoles []string        `json:"author_roles,omitempty"`
	Reason      string          `json:"reason"`
	Changes     []PlanChange    `json:"changes"`
	Status      PatchStatus     `json:"status"`
	Approvals   []ApprovalRule  `json:"approvals"`
	Decisions   []PatchDecision `json:"decisions,omitempty"`
	// AppliedRevision is the plan revision the patch made.
	AppliedRevision int `json:"applied_revision,omitempty"`
	// Reverts is the patch this one undoes.
	Reverts string `json:"reverts,omitempty"`
	// Analysis is what an analyzer's proposal rests on.
	Analysis *PatchAnalysis `json:"analysis,omitempty"`
	// Closed says why a patch left proposed (stale, withdrawn, rejected) and when.
	ClosedReason string     `json:"closed_reason,omitempty"`
	ClosedAt     *time.Time `json:"closed_at,omitempty"`
}

// PatchAnalysis is the analysis a proposal came from.
type PatchAnalysis struct {
	Analyzer  string            `json:"analyzer"`
	Node      string            `json:"node,omitempty"`
	Diagnosis string            `json:"diagnosis"`
	Missing   []string          `json:"missing_capabilities,omitempty"`
	Findings  []AnalysisFinding `json:"findings,omitempty"`
	// Evidence lists the ids of the evidence the analysis cites.
	Evidence []string `json:"evidence,omitempty"`
	// DroppedFindings and Model are a model's (Analysis).
	DroppedFindings int            `json:"dropped_findings,omitempty"`
	Model           *AnalysisModel `json:"model,omitempty"`
}

// ApprovalRule is one thing a patch needs before it applies: Approvals
// distinct people, each holding one of Roles, other than the author. Rule
// names what asked for it.
type ApprovalRule struct {
	Rule      string   `json:"rule"`
	Reason    string   `json:"reason"`
	Roles     []string `json:"roles"`
	Approvals int      `json:"approvals"`
}

// PatchDecision is one person's decision on a patch, bound to the digest
// they saw.
type PatchDecision struct {
	Actor   string    `json:"actor"`
	Roles   []string  `json:"roles"`
	Approve bool      `json:"approve"`
	Comment string    `json:"comment,omitempty"`
	Digest  string    `json:"digest"`
	At      time.Time `json:"at"`
}

// Move changes the patch's status or returns the illegal transition error.
func (p *PlanPatch) Move(to PatchStatus) error {
	if err := PatchStatuses.Check(p.Status, to); err != nil {
		return err
	}
	p.Status = to
	return nil
}

// PatchDigest binds a change set to the revision it applies to: the
// SHA-256 of the base revision's digest and the canonical changes (their
// JSON without the stamps of a made revision).
func PatchDigest(baseDigest string, changes []PlanChange) string {
	cs := make([]PlanChange, len(changes))
	for i, c := range changes {
		c.Actor, c.At, c.Revision = "", time.Time{}, 0
		cs[i] = c
	}
	return digestOf(struct {
		Base    string       `json:"base"`
		Changes []PlanChange `json:"changes"`
	}{baseDigest, cs})
}

// AgentPrefix marks an analyzer's actor id: ai-agent:<analyzer>.
const AgentPrefix = "ai-agent:"

// IsAgent reports whether an actor is an analyzer, which proposes and never approves.
func IsAgent(actor string) bool { return strings.HasPrefix(actor, AgentPrefix) }

// Roles that may approve a patch unless a rule names others.
var PatchApproverRoles = []string{RoleSRE, RolePlatformAdmin}

// Roles that may propose, withdraw and revert patches (analyzers propose too).
var PatchProposerRoles = []string{RoleOperator, RoleSRE, RolePlatformAdmin}

// GateTouch is a gate a change set touches (the gate itself, or something
// it waits for).
type GateTouch struct {
	Node string
	Spec GateSpec
}

// DefaultApprovalRules are the approvals every patch needs before any
// pack policy: a second person in prod, a person for an analyzer's
// proposal, and each touched gate's own roles and quorum.
func DefaultApprovalRules(production bool, author string, gates []GateTouch) []ApprovalRule {
	var out []ApprovalRule
	switch {
	case production && IsAgent(author):
		// The analyzer proposes on the operation's behalf: its starter
		// approving alone would be one person deciding, not two.
		out = append(out, ApprovalRule{Rule: "prod-second-person", Approvals: 2, Roles: PatchApproverRoles,
			Reason: "in prod an analyzer's patch needs two people, neither of them its proposer"})
	case production:
		out = append(out, ApprovalRule{Rule: "prod-second-person", Approvals: 1, Roles: PatchApproverRoles,
			Reason: "in prod a patch needs an approver other than its proposer"})
	}
	if author == AssessorActor {
		out = append(out, ApprovalRule{Rule: "assessor-needs-person", Approvals: 1, Roles: []string{RoleSRE, RolePlatformAdmin},
			Reason: "a gate a health assessment proposes is added only when a person approves it"})
	}
	if IsAgent(author) {
		out = append(out, ApprovalRule{Rule: "agent-needs-person", Approvals: 1, Roles: []string{RoleOperator, RoleSRE, RolePlatformAdmin},
			Reason: "a patch proposed by an analyzer is applied only when a person approves it"})
	}
	for _, g := range gates {
		n := max(g.Spec.Approvals, 1)
		out = append(out, ApprovalRule{Rule: "gate:" + g.Node, Approvals: n, Roles: append([]string(nil), g.Spec.RequiredRoles...),
			Reason: "the patch changes gate " + g.Node + " or what it waits for, so the gate's approvers decide"})
	}
	return out
}

// Counts reports whether a decision counts toward the patch's rules: an
// approval on the patch's digest by a person other than its author.
func (p *PlanPatch) Counts(d PatchDecision) bool {
	return d.Approve && d.Digest == p.Digest && d.Actor != p.Author && !IsAgent(d.Actor)
}

// Outstanding lists, for each rule not yet met, how many approvals it
// still needs. An approval counts for every rule whose roles the approver
// holds (admin holds all).
func (p *PlanPatch) Outstanding() map[string]int {
	out := map[string]int{}
	for _, r := range p.Approvals {
		got := 0
		for _, d := range p.Decisions {
			if p.Counts(d) && holdsAny(d.Roles, r.Roles) {
				got++
			}
		}
		if got < r.Approvals {
			out[r.Rule] = r.Approvals - got
		}
	}
	return out
}

// Approved reports whether every rule is met.
func (p *PlanPatch) Approved() bool { return len(p.Outstanding()) == 0 }

func holdsAny(have, want []string) bool {
	if slices.Contains(have, RoleAdmin) {
		return true
	}
	for _, w := range want {
		if slices.Contains(have, w) {
			return true
		}
	}
	return false
}

// CheckDecider says whether a may decide on the patch now: it is still
// proposed, a is a person other than its author, has not decided already,
// and holds a role some rule asks for (or a patch approver role). The
// digest is the one the decider saw: another one is a CONFLICT.
func (p *PlanPatch) CheckDecider(a *Actor, digest string) error {
	switch {
	case p.Status != PatchProposed:
		return Errorf(ECONFLICT, "%s is %s: only a proposed patch is decided", Named("plan patch", p.ID), p.Status)
	case IsAgent(a.ID):
		return Errorf(EFORBIDDEN, "an analyzer (%s) proposes patches and never decides them", a.ID)
	case a.ID == p.Author:
		return Errorf(EFORBIDDEN, "%s proposed this patch: the proposer never decides it", a.ID)
	case digest != p.Digest:
		return Errorf(ECONFLICT, "the patch's digest is %s, not the %s you decided on", p.Digest, digest)
	}
	for _, d := range p.Decisions {
		if d.Actor == a.ID && d.Digest == p.Digest {
			return Errorf(ECONFLICT, "%s already decided on this patch", a.ID)
		}
	}
	roles := slices.Clone(PatchApproverRoles)
	for _, r := range p.Approvals {
		roles = append(roles, r.Roles...)
	}
	if !a.HasRole(roles...) {
		return Errorf(EFORBIDDEN, "deciding on this patch needs one of the roles %s", strings.Join(uniq(roles), ", "))
	}
	return nil
}

func uniq(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// Validate checks a patch before a store writes it.
func (p *PlanPatch) Validate(operationID string) error {
	var pr Problems
	if p.OperationID != operationID {
		pr.Addf("belongs to operation %s, not %s", p.OperationID, operationID)
	}
	if p.PlanID == "" || p.BaseRevision < 1 || p.Digest == "" || p.BaseDigest == "" {
		pr.Addf("needs its plan, base revision and digests")
	}
	if p.Author == "" || len(p.Changes) == 0 {
		pr.Addf("needs an author and changes")
	}
	if !PatchStatuses.Valid(p.Status) {
		pr.Addf("unknown status %q", p.Status)
	}
	if p.Status == PatchApplied && p.AppliedRevision <= p.BaseRevision {
		pr.Addf("an applied patch names the revision it made")
	}
	return pr.Err("plan patch " + p.ID)
}
