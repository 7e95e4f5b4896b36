package capstan

// Plan is a scenario made concrete for one intent (invariant 3): the DAG,
// the bindings of every requirement, and the edits made before start.
type Plan struct {
	Meta
	IntentID    string     `json:"intent_id"`
	ScenarioRef string     `json:"scenario_ref"`
	Status      PlanStatus `json:"status"`
	// Revision counts the plan's immutable revisions: 1 as planned, one
	// more for each editPlan batch before start and each applied PlanPatch
	// after (SPEC §10). Digest is the current revision's (RevisionDigest).
	Revision       int               `json:"revision"`
	Digest         string            `json:"digest,omitempty"`
	Nodes          []PlanNode        `json:"nodes"`
	Edges          []Edge            `json:"edges"`
	Bindings       []ResourceBinding `json:"bindings"`
	Parameters     map[string]any    `json:"parameters,omitempty"`
	Customizations Customizations    `json:"customizations"`
	// Problems lists every reason an invalid plan is invalid.
	Problems []string `json:"problems,omitempty"`
	// Revised says who made the current revision, when, and how (the
	// change set and, after start, the patch); stores snapshot it.
	Revised RevisionSource `json:"revised,omitzero"`
}

// Node returns the node with id, or nil.
func (p *Plan) Node(id string) *PlanNode {
	for i := range p.Nodes {
		if p.Nodes[i].ID == id {
			return &p.Nodes[i]
		}
	}
	return nil
}

// Binding returns the binding with id, or nil.
func (p *Plan) Binding(id string) *ResourceBinding {
	for i := range p.Bindings {
		if p.Bindings[i].ID == id {
			return &p.Bindings[i]
		}
	}
	return nil
}

// Move changes the plan's status or returns the illegal transition error.
func (p *Plan) Move(to PlanStatus) error {
	if err := PlanStatuses.Check(p.Status, to); err != nil {
		return err
	}
	p.Status = to
	return nil
}

// Validate checks invariant 3 and 7 and the plan's statuses; graph checks
// belong to the planner, which also knows the scenario.
func (p *Plan) Validate() error {
	var pr Problems
	if p.IntentID == "" {
		pr.Addf("a plan must belong to an intent (invariant 3)")
	}
	if p.ScenarioRef == "" {
		pr.Addf("a plan must record the scenario it was made from (invariant 3)")
	}
	if p.Customizations.BaseTemplate != p.ScenarioRef {
		pr.Addf("customizations base template %q is not the scenario %q", p.Customizations.BaseTemplate, p.ScenarioRef)
	}
	if !PlanStatuses.Valid(p.Status) {
		pr.Addf("unknown status %q", p.Status)
	}
	if p.Status == PlanInvalid && len(p.Problems) == 0 {
		pr.Addf("an invalid plan must list its problems")
	}
	for i := range p.Bindings {
		if err := p.Bindings[i].Validate(); err != nil {
			pr = append(pr, ErrorDetails(err)...)
		}
	}
	return pr.Err("plan")
}

// Customizations records a plan's edits against its base template.
type Customizations struct {
	BaseTemplate string       `json:"base_template"`
	Changes      []PlanChange `json:"changes,omitempty"`
}

// ResourceBinding binds a requirement to a provider or to a sub-operation
// that will create one, and says why (invariant 7).
type ResourceBinding struct {
	// ID is the requirement's path: object-storage, or
	// object-storage/cluster for a requirement of a sub-operation.
	ID     string `json:"id"`
	Parent string `json:"parent,omitempty"`
	// Scenario is the scenario ref the requirement belongs to.
	Scenario    string                `json:"scenario"`
	Requirement CapabilityRequirement `json:"requirement"`
	// Constraints are the requirement's constraints with every reference
	// (same-as-workload, ${intent.x}) resolved to a value.
	Constraints  map[string]any       `json:"constraints,omitempty"`
	Status       BindingStatus        `json:"status"`
	Provider     *BoundProvider       `json:"provider,omitempty"`
	SubOperation *SubOperationBinding `json:"sub_operation,omitempty"`
	// Explicit is true when the user chose the provider.
	Explicit   bool               `json:"explicit,omitempty"`
	Reason     string             `json:"reason"`
	Candidates []CandidateVerdict `json:"candidates,omitempty"`
	// OmittedCandidates counts rejected candidates not listed; OmittedReasons
	// counts, per constraint key, how many of them failed it.
	OmittedCandidates int            `json:"omitted_candidates,omitempty"`
	OmittedReasons    map[string]int `json:"omitted_reasons,omitempty"`
	// RankedBelow counts candidates that meet every constraint but rank
	// below the listed ones: a better one was accepted first, so policies
	// never looked at them.
	RankedBelow int `json:"ranked_below,omitempty"`
}

// BoundProvider is the resource a binding selected.
type BoundProvider struct {
	ResourceID  string `json:"resource_id"`
	ResourceKey string `json:"resource_key"`
	Capability  string `json:"capability"`
}

// SubOperationBinding is the scenario that will create the provider.
type SubOperationBinding struct {
	Scenario           string         `json:"scenario"`
	ExpectedCapability string         `json:"expected_capability"`
	Attributes         map[string]any `json:"attributes,omitempty"`
	// NodeID is the plan node that runs the sub-operation.
	NodeID string `json:"node_id,omitempty"`
}

// CandidateKind says whether a candidate is an existing resource or a
// scenario that could create one.
const (
	CandidateResource = "resource"
	CandidateScenario = "scenario"
)

// CandidateVerdict explains one considered candidate.
type CandidateVerdict struct {
	Kind string `json:"kind"`
	// Ref is the resource key or the scenario ref.
	Ref        string `json:"ref"`
	ResourceID string `json:"resource_id,omitempty"`
	// Capability is the capability the candidate provides; when it differs
	// from the requirement's, Via is the implication path.
	Capability string            `json:"capability"`
	Via        []string          `json:"via,omitempty"`
	Lifecycle  LifecycleStatus   `json:"lifecycle,omitempty"`
	Checks     []ConstraintCheck `json:"checks,omitempty"`
	Policies   []PolicyVerdict   `json:"policies,omitempty"`
	Accepted   bool              `json:"accepted"`
	Selected   bool              `json:"selected,omitempty"`
	Rank       int               `json:"rank,omitempty"`
	Reason     string            `json:"reason"`
}

// PolicyVerdict is the outcome of one policy on one candidate.
type PolicyVerdict struct {
	Policy string `json:"policy"`
	Passed bool   `json:"passed"`
	Reason string `json:"reason"`
}

// Validate enforces invariant 7: a binding says why it chose its provider
// (or sub-operation) and why each other candidate was not chosen.
func (b *ResourceBinding) Validate() error {
	var p Problems
	if b.Reason == "" {
		p.Addf("has no resolution reason (invariant 7)")
	}
	switch b.Status {
	case BindingResolved:
		if b.Provider == nil {
			p.Addf("is resolved but has no provider")
		}
	case BindingPendingSubOperation:
		if b.SubOperation == nil {
			p.Addf("is pending a sub-operation but names none")
		}
	case BindingUnresolved, BindingFailed:
	default:
		p.Addf("unknown status %q", b.Status)
	}
	for _, c := range b.Candidates {
		if c.Reason == "" {
			p.Addf("candidate %s has no reason (invariant 7)", c.Ref)
		}
	}
	if b.Requirement.Provider != "" && !b.Explicit {
		p.Addf("requirement names provider %s that the user did not choose (invariant 6)", b.Requirement.Provider)
	}
	return p.Err("binding " + b.ID)
}

// ObjectPreview is what applying one object of a plan's kubernetes step
// would do now, from a server-side dry run on its cluster: nothing is
// written. Action is created, configured or unchanged; Changes are the
// fields it would change (a Secret's values masked, and every secret
// value of the organization); Error says why the object could not be
// previewed (the cluster unreachable, the object invalid: what the step
// would meet).
type ObjectPreview struct {
	Node    string      `json:"node"`
	Cluster string      `json:"cluster"`
	Object  string      `json:"object"`
	Action  string      `json:"action"`
	Changes []FieldDiff `json:"changes"`
	Error   string      `json:"error,omitempty"`
}
