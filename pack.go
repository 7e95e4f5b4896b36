package capstan

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ScenarioPack is a marketplace or internal package of scenarios. Packs are
// immutable once installed: the same id and version with different content is
// a conflict; a new version is installed beside the old ones.
type ScenarioPack struct {
	ID            string                 `json:"id"`
	Version       string                 `json:"version"`
	Source        string                 `json:"source,omitempty"`
	Description   string                 `json:"description,omitempty"`
	ResourceTypes []ResourceType         `json:"resource_types,omitempty"`
	Capabilities  []CapabilityDefinition `json:"capabilities,omitempty"`
	Provides      []string               `json:"provides,omitempty"`
	Scenarios     []Scenario             `json:"scenarios,omitempty"`
	Policies      []Policy               `json:"policies,omitempty"`
	// NodeTemplates are the nodes plan changes may insert by name.
	NodeTemplates []NodeTemplate `json:"node_templates,omitempty"`
	// FailureRules are known failures the rule analyzer recognizes.
	FailureRules []FailureRule `json:"failure_rules,omitempty"`
	// PatchPolicies decide about plan changes (patch_policies).
	PatchPolicies []PatchPolicy `json:"patch_policies,omitempty"`
	// RBAC is what the pack's kubernetes steps and probes need of the
	// identity Capstan acts as on a cluster: the pack declares it, an
	// administrator grants it (`capstan cluster rbac` renders the grant),
	// and a step that reaches outside it is FORBIDDEN.
	RBAC []RBACRule `json:"rbac,omitempty"`
	// Charts are the Helm charts the pack's helm steps install: a
	// directory pack's charts/<name>/ files, or a charts section.
	Charts         []Chart `json:"charts,omitempty"`
	OrganizationID string  `json:"organization_id,omitempty"`
	// Digest is the SHA-256 of the pack's canonical content, set by the loader.
	Digest      string    `json:"digest,omitempty"`
	InstalledAt time.Time `json:"installed_at,omitzero"`
}

// Chart is a Helm chart a pack ships: its files by path in the chart
// (Chart.yaml, values.yaml, templates/deployment.yaml). No chart
// repository is ever reached: a helm step installs only what its pack
// holds, and its plan carries the files (RunSpec.ChartFiles), so an
// approval covers the chart that runs.
type Chart struct {
	Name  string            `json:"name"`
	Files map[string]string `json:"files"`
}

// RBACRule is one Kubernetes RBAC rule a pack needs, and why.
type RBACRule struct {
	APIGroups []string `json:"api_groups"`
	Resources []string `json:"resources"`
	Verbs     []string `json:"verbs"`
	Why       string   `json:"why,omitempty"`
}

// Ref returns id@version.
func (p *ScenarioPack) Ref() string { return p.ID + "@" + p.Version }

// NewestPacks keeps the newest installed version of each pack, in the
// order the packs' ids first appear.
func NewestPacks(packs []*ScenarioPack) []*ScenarioPack {
	best := map[string]*ScenarioPack{}
	var order []string
	for _, p := range packs {
		b, ok := best[p.ID]
		if !ok {
			order = append(order, p.ID)
		}
		if !ok || CompareSemver(p.Version, b.Version) > 0 {
			best[p.ID] = p
		}
	}
	out := make([]*ScenarioPack, len(order))
	for i, id := range order {
		out[i] = best[id]
	}
	return out
}

// Scenario is a versioned action template. It holds no runtime state
// (invariant 2): it has no status and is never written by planning or runs.
type Scenario struct {
	ID                 string                  `json:"id"`
	Version            string                  `json:"version,omitempty"`
	Pack               string                  `json:"pack,omitempty"`
	Action             string                  `json:"action"`
	TargetResourceType string                  `json:"target_resource_type"`
	Description        string                  `json:"description,omitempty"`
	Requires           []CapabilityRequirement `json:"requires,omitempty"`
	Provides           []ProvidedCapability    `json:"provides,omitempty"`
	Plan               PlanTemplate            `json:"plan"`
	// Editable scenarios take every change of the vocabulary; the others
	// (and simple-mode intents) only changes of EditableParameters.
	Editable           bool     `json:"editable,omitempty"`
	EditableParameters []string `json:"editable_parameters,omitempty"`
	// DesiredState is what the resource should be once the scenario's
	// operation succeeded (a config's checksum, a version): the operation
	// records it on the resource, and a health assessment compares what
	// it observes with it.
	DesiredState map[string]any `json:"desired_state,omitempty"`
}

// Ref returns id@version, the form plans record (tempo.install@1.0.0).
func (s *Scenario) Ref() string { return s.ID + "@" + s.Version }

// ProvidesCapability returns the capability the scenario's result provides, or nil.
func (s *Scenario) ProvidesCapability(key string) *ProvidedCapability {
	for i := range s.Provides {
		if s.Provides[i].Capability == key {
			return &s.Provides[i]
		}
	}
	return nil
}

// PlanTemplate is the DAG a scenario turns into a plan.
type PlanTemplate struct {
	Nodes []PlanNode `json:"nodes"`
	Edges []Edge     `json:"edges,omitempty"`
}

// Edge says To runs after From.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// NodeType is the type of a plan node.
type NodeType string

const (
	NodeStage              NodeType = "stage"
	NodeJob                NodeType = "job"
	NodeGate               NodeType = "gate"
	NodeSubOperation       NodeType = "sub_operation"
	NodeVerification       NodeType = "verification"
	NodeManualIntervention NodeType = "manual_intervention"
	NodeAIAnalysis         NodeType = "ai_analysis"
)

// NodeTypes lists every node type.
var NodeTypes = []NodeType{NodeStage, NodeJob, NodeGate, NodeSubOperation, NodeVerification, NodeManualIntervention, NodeAIAnalysis}

// PlanNode is one node of a plan template or a plan.
type PlanNode struct {
	ID          string   `json:"id"`
	Type        NodeType `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	// Children lists the nodes a stage groups.
	Children []string `json:"children,omitempty"`
	// After lists nodes that must finish first; the loader turns it into edges.
	After []string `json:"after,omitempty"`
	// Requires lists requirement ids whose bindings this node consumes.
	Requires []string `json:"requires,omitempty"`
	// Produces lists capability keys this node makes true.
	Produces     []string          `json:"produces,omitempty"`
	Parameters   map[string]any    `json:"parameters,omitempty"`
	Job          *JobContract      `json:"job,omitempty"`
	Gate         *GateSpec         `json:"gate,omitempty"`
	Probes       []Probe           `json:"probes,omitempty"`
	SubOperation *SubOperationSpec `json:"sub_operation,omitempty"`
	Intervention *InterventionSpec `json:"intervention,omitempty"`
	Analysis     *AnalysisSpec     `json:"analysis,omitempty"`
	// Template is the node template (pack@version/name) the node was
	// inserted from by a plan change.
	Template string `json:"template,omitempty"`
}

// NodeTemplate is a node a pack publishes for plan changes to insert by
// name: the code it runs comes from the pack, not from the change.
type NodeTemplate struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters are the parameters an insert may set; their defaults are
	// the node's parameters.
	Parameters []string `json:"parameters,omitempty"`
	Node       PlanNode `json:"node"`
	// Pack is the ref of the pack that published it (set on load).
	Pack string `json:"pack,omitempty"`
}

// FailureRule is a known failure a pack teaches the rule analyzer: when
// Node fails with the failed evidence item Evidence (or an error matching
// the regular expression Error), Diagnosis says why, MissingCapability
// names what was missing, and Patch proposes the fix (pack node templates
// only: a rule brings no code of its own).
type FailureRule struct {
	ID                string       `json:"id"`
	Node              string       `json:"node"`
	Evidence          string       `json:"evidence,omitempty"`
	Error             string       `json:"error,omitempty"`
	Diagnosis         string       `json:"diagnosis"`
	MissingCapability string       `json:"missing_capability,omitempty"`
	Patch             []PlanChange `json:"patch,omitempty"`
	// Pack is the ref of the pack that ships it (set on load).
	Pack string `json:"pack,omitempty"`
}

// MatchRef is a reference to a named group of a failure rule's error
// pattern, ${match.NAME}: the analyzer fills it with what the group
// matched (analysis.MatchRules).
var MatchRef = regexp.MustCompile(`\$\{match\.([A-Za-z_][A-Za-z0-9_]*)\}`)

// Validate checks a rule's own shape.
func (r *FailureRule) Validate() error {
	var p Problems
	if !ValidKey(r.ID) || r.Node == "" || strings.TrimSpace(r.Diagnosis) == "" {
		p.Addf("needs an id, a node and a diagnosis")
	}
	if r.Evidence == "" && r.Error == "" {
		p.Addf("needs an evidence item or an error pattern to match")
	}
	groups := map[string]bool{}
	if r.Error != "" {
		re, err := regexp.Compile(r.Error)
		if err != nil {
			p.Addf("error pattern %q does not compile: %v", r.Error, err)
		} else {
			for _, name := range re.SubexpNames() {
				groups[name] = name != ""
			}
		}
	}
	texts := []string{r.Diagnosis}
	for _, c := range r.Patch {
		texts = append(texts, c.Reason)
		for _, v := range c.Parameters {
			if s, ok := v.(string); ok {
				texts = append(texts, s)
			}
		}
	}
	for _, t := range texts {
		for _, m := range MatchRef.FindAllStringSubmatch(t, -1) {
			if !groups[m[1]] {
				p.Addf("${match.%s} names no group of the error pattern (write (?P<%s>...) in it)", m[1], m[1])
			}
		}
	}
	for i, c := range r.Patch {
		if c.Spec != nil {
			p.Addf("patch change %d: a rule inserts node templates, not inline nodes", i+1)
		}
		for _, s := range c.CheckShape() {
			p.Addf("patch change %d: %s", i+1, s)
		}
	}
	return p.Err("failure rule " + r.ID)
}

// PatchPolicy is a CEL rule over a plan change set (SPEC §10). When When
// holds (over `patch` and `intent`), Effect says what follows: approve (no
// second person nor gate approval needed: an analyzer's patch still needs
// a person), reject, require (Approvals of Roles), or allow (the
// governance rules named in Allows are waived).
type PatchPolicy struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	When        string   `json:"when"`
	Effect      string   `json:"effect"`
	Roles       []string `json:"roles,omitempty"`
	Approvals   int      `json:"approvals,omitempty"`
	Allows      []string `json:"allows,omitempty"`
	Pack        string   `json:"pack,omitempty"`
}

// Patch policy effects.
const (
	PatchApprove = "approve"
	PatchReject  = "reject"
	PatchRequire = "require"
	PatchAllow   = "allow"
)

// Validate checks a patch policy's shape (its CEL is compiled by the
// policy package).
func (pp *PatchPolicy) Validate() error {
	var p Problems
	if !ValidKey(pp.ID) || strings.TrimSpace(pp.When) == "" || strings.TrimSpace(pp.Description) == "" {
		p.Addf("needs an id, a description and a when expression")
	}
	switch pp.Effect {
	case PatchApprove, PatchReject:
	case PatchRequire:
		if len(pp.Roles) == 0 || pp.Approvals < 1 {
			p.Addf("require needs roles and at least one approval")
		}
	case PatchAllow:
		for _, r := range pp.Allows {
			if !slices.Contains(ForbiddenRules, r) {
				p.Addf("allows %q, which is not one of %s", r, strings.Join(ForbiddenRules, ", "))
			}
		}
		if len(pp.Allows) == 0 {
			p.Addf("allow names the rules it waives")
		}
	default:
		p.Addf("effect %q is not approve, reject, require or allow", pp.Effect)
	}
	return p.Err("patch policy " + pp.ID)
}

// Ref is pack@version/name.
func (t *NodeTemplate) Ref() string { return t.Pack + "/" + t.Name }

// Instantiate returns the template's node with id and parameters set;
// problems name parameters the template does not declare.
func (t *NodeTemplate) Instantiate(id string, params map[string]any) (PlanNode, []string) {
	var n PlanNode
	b, _ := json.Marshal(t.Node) // a node decoded from JSON: cannot fail
	_ = json.Unmarshal(b, &n)
	n.ID, n.Template, n.After = id, t.Ref(), nil
	var probs []string
	for _, k := range sortedKeys(params) {
		if !slices.Contains(t.Parameters, k) {
			probs = append(probs, fmt.Sprintf("template %s has no parameter %q (it takes %s)", t.Name, k, orNone(t.Parameters)))
			continue
		}
		if n.Parameters == nil {
			n.Parameters = map[string]any{}
		}
		if params[k] == nil {
			delete(n.Parameters, k)
		} else {
			n.Parameters[k] = params[k]
		}
	}
	return n, probs
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// JobContract is the input/output contract of an executable node.
type JobContract struct {
	Run      RunSpec     `json:"run"`
	Inputs   JobInputs   `json:"inputs,omitzero"`
	Outputs  JobOutputs  `json:"outputs,omitzero"`
	Controls JobControls `json:"controls,omitzero"`
}

// RunSpec says how a job runs: runner shell, http or sim.
type RunSpec struct {
	Runner       string            `json:"runner"`
	Script       string            `json:"script,omitempty"`
	Method       string            `json:"method,omitempty"`
	URL          string            `json:"url,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	ExpectStatus int               `json:"expect_status,omitempty"`
	Outcomes     []string          `json:"outcomes,omitempty"`
	Duration     string            `json:"duration,omitempty"`
	Timeout      string            `json:"timeout,omitempty"`
	// Target names the requirement whose bound compute node a remote job
	// (runner ssh or ansible) runs on: never an address.
	Target string `json:"target,omitempty"`
	// Playbook is an ansible job's playbook (YAML, hosts: target); Check
	// runs it with --check, a dry run that changes nothing.
	Playbook string `json:"playbook,omitempty"`
	Check    bool   `json:"check,omitempty"`
	// TrustOnFirstUse (ssh only) trusts the key a target with no pinned
	// host key presents the first time, pins it on the compute node and
	// records host_key.trusted in the timeline. Off, an unpinned host is
	// refused.
	TrustOnFirstUse bool `json:"trust_on_first_use,omitempty"`
	// Manifests (runner kubernetes) are the objects the job applies with
	// server-side apply, as YAML documents; a string value that is
	// ${param.NAME}, or holds it, takes the job's parameter NAME
	// (executor/kube). Target names the requirement bound to the cluster.
	Manifests string `json:"manifests,omitempty"`
	// Namespace (kubernetes) is where namespaced objects that name none
	// go.
	Namespace string `json:"namespace,omitempty"`
	// Force (kubernetes) takes over fields another field manager owns;
	// off, such a conflict fails the step (error kind conflict).
	Force bool `json:"force,omitempty"`
	// Delete (kubernetes) deletes the manifests' objects instead of
	// applying them, and waits until they are gone: a compensation's.
	Delete bool `json:"delete,omitempty"`
	// Reapply (kubernetes) applies again, instead of the manifests, the
	// objects the resource's operations applied (its desired state's
	// applied_objects, AppliedObjects): a repair's, with Force to take
	// back what another manager changed.
	Reapply bool `json:"reapply,omitempty"`
	// Drain (kubernetes) is the node the step cordons and drains through
	// the eviction API, honouring PodDisruptionBudgets (a placeholder as
	// in manifests: ${param.node}), instead of applying manifests; with
	// Delete, the drained node is then removed from the cluster.
	Drain string `json:"drain,omitempty"`
	// Bucket (runner s3) is the bucket the step makes on the store its
	// target is, unless it exists (a placeholder as in manifests:
	// ${param.bucket}).
	Bucket string `json:"bucket,omitempty"`
	// Chart (runner helm) names the pack's chart the step installs or
	// upgrades as Release (in Namespace), with Values (YAML, placeholders
	// as in manifests). A failed install or upgrade rolls back within
	// the step. Undo undoes the release's last change instead: a
	// rollback to the revision before, or an uninstall of a first
	// install (a compensation's).
	Chart   string `json:"chart,omitempty"`
	Release string `json:"release,omitempty"`
	Values  string `json:"values,omitempty"`
	Undo    bool   `json:"undo,omitempty"`
	// ChartFiles are the chart's files, which the pack's loader copies
	// from the pack: never written by hand.
	ChartFiles map[string]string `json:"chart_files,omitempty"`
}

// JobInputs lists what a job consumes.
type JobInputs struct {
	Parameters   map[string]any `json:"parameters,omitempty"`
	Capabilities []string       `json:"capabilities,omitempty"`
	Artifacts    []string       `json:"artifacts,omitempty"`
}

// JobOutputs lists what a job must produce. A job succeeds only when every
// evidence probe passes (invariant 5).
type JobOutputs struct {
	Capabilities []string       `json:"capabilities,omitempty"`
	Artifacts    []ArtifactSpec `json:"artifacts,omitempty"`
	Evidence     []Probe        `json:"evidence,omitempty"`
}

// ArtifactSpec declares an artifact a job produces.
type ArtifactSpec struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Sensitivity string `json:"sensitivity"`
}

// JobControls holds retry, rollback and assistance controls.
type JobControls struct {
	Retry                     RetryPolicy    `json:"retry,omitzero"`
	Rollback                  RollbackPolicy `json:"rollback,omitzero"`
	ManualInterventionAllowed bool           `json:"manual_intervention_allowed,omitempty"`
	AIAssistanceAllowed       bool           `json:"ai_assistance_allowed,omitempty"`
	// Idempotent says the job may be re-run without proof that it did not
	// already take effect.
	Idempotent bool `json:"idempotent,omitempty"`
}

// RetryPolicy uses Temporal's vocabulary.
type RetryPolicy struct {
	InitialInterval    string   `json:"initial_interval,omitempty"`
	BackoffCoefficient float64  `json:"backoff_coefficient,omitempty"`
	MaximumInterval    string   `json:"maximum_interval,omitempty"`
	MaximumAttempts    int      `json:"maximum_attempts,omitempty"`
	NonRetryableErrors []string `json:"non_retryable_errors,omitempty"`
	// OnExhausted is wait (needs attention) or fail.
	OnExhausted string `json:"on_exhausted,omitempty"`
}

// RollbackPolicy says how a job is compensated.
type RollbackPolicy struct {
	Strategy     string   `json:"strategy,omitempty"`
	Compensation *RunSpec `json:"compensation,omitempty"`
	Evidence     []Probe  `json:"evidence,omitempty"`
}

// Probe is one evidence check: command, http, resource_state, capability
// (the provider bound to Requirement provides Capability, or a node of the
// operation that succeeded made it) or sim.
type Probe struct {
	Name          string `json:"name"`
	Type          string `json:"type"`
	Capability    string `json:"capability,omitempty"`
	Requirement   string `json:"requirement,omitempty"`
	Script        string `json:"script,omitempty"`
	ExpectExit    int    `json:"expect_exit,omitempty"`
	OutputPattern string `json:"output_pattern,omitempty"`
	URL           string `json:"url,omitempty"`
	ExpectStatus  int    `json:"expect_status,omitempty"`
	Resource      string `json:"resource,omitempty"`
	Field         string `json:"field,omitempty"`
	Equals        any    `json:"equals,omitempty"`
	// Target names the requirement whose bound compute node a probe of
	// real state checks (tcp, ssh_command, file, service; an http probe
	// may name one for ${target.address} in its URL).
	Target string `json:"target,omitempty"`
	// Port is what a tcp probe dials on the target.
	Port int `json:"port,omitempty"`
	// Path is the file a file probe checks; SHA256, Owner and Mode what
	// it must have (each optional).
	Path   string `json:"path,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Owner  string `json:"owner,omitempty"`
	Mode   string `json:"mode,omitempty"`
	// Pidfile is where a service probe reads the process id, and Process
	// the command name that process must have.
	Pidfile string `json:"pidfile,omitempty"`
	Process string `json:"process,omitempty"`
	// JSONPath picks a value of an http probe's JSON body (a dotted path:
	// $.status.phase) that must equal Equals.
	JSONPath string `json:"json_path,omitempty"`
	// BodyPattern is a regular expression an http probe's body must match.
	BodyPattern string `json:"body_pattern,omitempty"`
	// Observes names the field of the resource's desired state whose
	// value the probe reads (ObservedValue): the value must equal the
	// desired one, in a job's evidence as in a health assessment.
	Observes string `json:"observes,omitempty"`
	// Object is the Kubernetes object a kubernetes probe reads on its
	// target cluster (executor/kube): it passes when the object is ready
	// for its kind (rolled out, available, complete, bound; a Service
	// with a ready endpoint), and Field, when set, is the dotted path of
	// the value it observes (spec.replicas).
	Object *ObjectRef `json:"object,omitempty"`
	// Absent turns a kubernetes probe around: it passes when the object
	// does not exist (a deletion's or a compensation's evidence).
	Absent bool `json:"absent,omitempty"`
	// Bucket is the bucket an s3 probe proves writable (a PUT, a GET, a
	// DELETE), a placeholder as in manifests.
	Bucket string `json:"bucket,omitempty"`
	// Drift (kubernetes, observe probes) compares every object the
	// resource's operations applied (AppliedObjects) with the live one,
	// field by field, and names who changed a field (its managedFields):
	// a missing object or a changed field is drift; an object not ready,
	// or a workload with pods on a node that is not Ready, fails it.
	Drift bool `json:"drift,omitempty"`
	// User, Database and PasswordArtifact are how a postgres probe logs
	// in to the server on its target (Port, 5432 when unset): as User
	// (postgres when unset) to Database (postgres when unset), with the
	// value of the operation's secret artifact PasswordArtifact.
	User             string `json:"user,omitempty"`
	Database         string `json:"database,omitempty"`
	PasswordArtifact string `json:"password_artifact,omitempty"`
}

// ObjectRef names a Kubernetes object.
type ObjectRef struct {
	APIVersion string `json:"api_version"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// GateSpec configures a gate node.
type GateSpec struct {
	Type          string   `json:"type"`
	Reason        string   `json:"reason"`
	RequiredRoles []string `json:"required_roles"`
	Approvals     int      `json:"approvals,omitempty"`
	Timeout       string   `json:"timeout,omitempty"`
	OnTimeout     string   `json:"on_timeout,omitempty"`
	// NoDrift: the gate is approved only while no resource the plan binds
	// (nor the operation's own) has unresolved drift (UnresolvedDrift).
	NoDrift bool `json:"no_drift,omitempty"`
}

// SubOperationSpec names the scenario a sub_operation node runs and the
// requirement whose pending binding it fulfils.
type SubOperationSpec struct {
	Scenario           string `json:"scenario"`
	Requirement        string `json:"requirement,omitempty"`
	ExpectedCapability string `json:"expected_capability,omitempty"`
}

// InterventionSpec configures a manual_intervention node.
type InterventionSpec struct {
	Instructions string  `json:"instructions"`
	Verification []Probe `json:"verification,omitempty"`
}

// AnalysisSpec configures an ai_analysis node.
type AnalysisSpec struct {
	Question string   `json:"question"`
	Inputs   []string `json:"inputs,omitempty"`
	Output   string   `json:"output,omitempty"`
	// Model asks for the configured model even when a pack's failure rule
	// recognizes the failure (by default the rules answer first).
	Model bool `json:"model,omitempty"`
}

// Policy is a rule over candidate providers written in CEL. When When holds
// for a requirement of Capability, a candidate passes only if Require holds.
type Policy struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Capability  string `json:"capability,omitempty"`
	When        string `json:"when,omitempty"`
	Require     string `json:"require"`
	// Explain, a CEL string expression over the same variables, says why
	// a candidate fails require; its text follows the description.
	Explain string `json:"explain,omitempty"`
	Pack    string `json:"pack,omitempty"`
}

// Validate checks the node's own fields and type-specific settings.
func (n *PlanNode) Validate() error {
	var p Problems
	if !ValidKey(n.ID) {
		p.Addf("id %q is not a valid key", n.ID)
	}
	if n.Title == "" {
		p.Addf("title is empty")
	}
	need := func(ok bool, what string) {
		if !ok {
			p.Addf("a %s node needs %s", n.Type, what)
		}
	}
	switch n.Type {
	case NodeStage:
		need(len(n.Children) > 0, "children")
	case NodeJob:
		need(n.Job != nil, "a job contract")
		if n.Job != nil {
			validateJob(n.Job, &p)
		}
	case NodeGate:
		need(n.Gate != nil && len(n.Gate.RequiredRoles) > 0, "a gate with required_roles")
		if n.Gate != nil {
			validDuration(n.Gate.Timeout, "gate timeout", &p)
			if n.Gate.Approvals < 0 {
				p.Addf("gate approvals must not be negative")
			}
		}
	case NodeVerification:
		need(len(n.Probes) > 0, "probes")
	case NodeSubOperation:
		need(n.SubOperation != nil && n.SubOperation.Scenario != "", "a sub_operation scenario")
	case NodeManualIntervention:
		need(n.Intervention != nil && n.Intervention.Instructions != "", "intervention instructions")
	case NodeAIAnalysis:
		need(n.Analysis != nil && n.Analysis.Question != "", "an analysis question")
	default:
		p.Addf("unknown node type %q", n.Type)
	}
	if n.Type != NodeStage && len(n.Children) > 0 {
		p.Addf("only a stage node has children")
	}
	// Each setting belongs to one type, so what a node runs and what
	// proves it (RunProbes) is never ambiguous.
	for _, x := range []struct {
		set  bool
		want NodeType
		what string
	}{{n.Job != nil, NodeJob, "a job contract"}, {len(n.Probes) > 0, NodeVerification, "probes"},
		{n.Intervention != nil, NodeManualIntervention, "an intervention"}, {n.Gate != nil, NodeGate, "a gate"},
		{n.SubOperation != nil, NodeSubOperation, "a sub_operation"}, {n.Analysis != nil, NodeAIAnalysis, "an analysis"}} {
		if x.set && n.Type != x.want {
			p.Addf("a %s node has no %s (only a %s node has)", n.Type, x.what, x.want)
		}
	}
	for _, pr := range n.AllProbes() {
		validateProbe(pr, &p)
	}
	return p.Err("node " + n.ID)
}

// RunProbes are the probes that prove a node done: a job's evidence, a
// verification's probes, an intervention's verification.
func (n *PlanNode) RunProbes() []Probe {
	switch {
	case n.Job != nil:
		return n.Job.Outputs.Evidence
	case n.Intervention != nil:
		return n.Intervention.Verification
	}
	return n.Probes
}

// AllProbes are every probe of a node: what proves it, and what proves
// its rollback.
func (n *PlanNode) AllProbes() []Probe {
	probes := append([]Probe(nil), n.Probes...)
	if n.Job != nil {
		probes = append(probes, n.Job.Outputs.Evidence...)
		probes = append(probes, n.Job.Controls.Rollback.Evidence...)
	}
	if n.Intervention != nil {
		probes = append(probes, n.Intervention.Verification...)
	}
	return probes
}

// Simulated reports whether the node's job runs the simulator or any of
// its probes is simulated: it changes and proves nothing real, and every
// surface that shows the node says so.
func (n *PlanNode) Simulated() bool {
	if n.Job != nil && (n.Job.Run.Runner == "sim" || (n.Job.Controls.Rollback.Compensation != nil && n.Job.Controls.Rollback.Compensation.Runner == "sim")) {
		return true
	}
	for _, pr := range n.AllProbes() {
		if pr.Type == "sim" {
			return true
		}
	}
	return false
}

// JobParameters are the parameters a job node's job runs with: its
// inputs' defaults, overridden by the node's own (a plan change sets
// those). Nil for a node without a job.
func (n *PlanNode) JobParameters() map[string]any {
	if n.Job == nil {
		return nil
	}
	params := map[string]any{}
	for k, v := range n.Job.Inputs.Parameters {
		params[k] = v
	}
	for k, v := range n.Parameters {
		params[k] = v
	}
	return params
}

// Targets lists the requirements the node acts on remotely: its run's
// and compensation's target and its probes', each once. Each must be one
// the node requires (Validate), so that it is bound before the node runs.
func (n *PlanNode) Targets() []string {
	var out []string
	add := func(r string) {
		if r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	if n.Job != nil {
		add(n.Job.Run.Target)
		if c := n.Job.Controls.Rollback.Compensation; c != nil {
			add(c.Target)
		}
	}
	for _, pr := range n.AllProbes() {
		add(pr.Target)
	}
	return out
}

func validateJob(j *JobContract, p *Problems) {
	validateRun(j.Run, "run", p)
	r := j.Controls.Retry
	validDuration(r.InitialInterval, "retry initial_interval", p)
	validDuration(r.MaximumInterval, "retry maximum_interval", p)
	if r.BackoffCoefficient != 0 && r.BackoffCoefficient < 1 {
		p.Addf("retry backoff_coefficient must be at least 1")
	}
	if r.MaximumAttempts < 0 {
		p.Addf("retry maximum_attempts must not be negative")
	}
	switch r.OnExhausted {
	case "", "wait", "fail":
	default:
		p.Addf("retry on_exhausted must be wait or fail")
	}
	if c := j.Controls.Rollback.Compensation; c != nil {
		validateRun(*c, "rollback compensation", p)
	}
	if rb := j.Controls.Rollback; rb.Strategy == "compensate" && (rb.Compensation == nil || len(rb.Evidence) == 0) {
		p.Addf("rollback strategy compensate needs a compensation and its evidence (invariant 5)")
	}
	for _, a := range j.Outputs.Artifacts {
		// The name is a file in the operation's outputs directory, which
		// the server reads (and deletes, for a secret one): a plain name,
		// never a path out of it.
		if a.Name == "" || a.Name == "." || a.Name == ".." || strings.ContainsAny(a.Name, "/\\\x00") {
			p.Addf("artifact %q: the name must be a plain file name (no /, no ..)", a.Name)
		}
		switch a.Sensitivity {
		case "public", "internal", "secret":
		default:
			p.Addf("artifact %s: sensitivity must be public, internal or secret", a.Name)
		}
	}
}

func validateRun(r RunSpec, what string, p *Problems) {
	switch r.Runner {
	case "shell":
		if r.Script == "" {
			p.Addf("%s: shell runner needs a script", what)
		}
	case "http":
		if r.URL == "" {
			p.Addf("%s: http runner needs a url", what)
		}
	case "ssh":
		if r.Script == "" || r.Target == "" {
			p.Addf("%s: ssh runner needs a script and a target (a requirement bound to a compute node)", what)
		}
	case "ansible":
		if r.Playbook == "" || r.Target == "" {
			p.Addf("%s: ansible runner needs a playbook and a target (a requirement bound to a compute node)", what)
		}
	case "kubernetes":
		n := 0
		for _, set := range []bool{r.Manifests != "", r.Reapply, r.Drain != ""} {
			if set {
				n++
			}
		}
		if n != 1 || r.Target == "" {
			p.Addf("%s: kubernetes runner needs one of manifests, reapply and drain, and a target (a requirement bound to a cluster)", what)
		}
	case "helm":
		if r.Chart == "" || r.Release == "" || r.Namespace == "" || r.Target == "" {
			p.Addf("%s: helm runner needs a chart (one the pack ships), a release, a namespace and a target (a requirement bound to a cluster)", what)
		}
	case "s3":
		if r.Bucket == "" || r.Target == "" {
			p.Addf("%s: s3 runner needs a bucket and a target (a requirement bound to an object store)", what)
		}
	case "sim":
		validDuration(r.Duration, what+" duration", p)
	default:
		p.Addf("%s: unknown runner %q (want shell, http, ssh, ansible, kubernetes, helm, s3 or sim)", what, r.Runner)
	}
	if r.Bucket != "" && r.Runner != "s3" {
		p.Addf("%s: bucket is for the s3 runner", what)
	}
	kube := r.Runner == "kubernetes" || r.Runner == "helm"
	if (r.Force || r.Namespace != "") && !kube {
		p.Addf("%s: force and namespace are for the kubernetes and helm runners", what)
	}
	if (r.Delete || r.Reapply || r.Drain != "") && r.Runner != "kubernetes" {
		p.Addf("%s: delete, reapply and drain are for the kubernetes runner", what)
	}
	if r.Delete && r.Reapply {
		p.Addf("%s: delete and reapply exclude each other", what)
	}
	// (delete with drain removes the drained node.)
	if (r.Chart != "" || r.Release != "" || r.Values != "" || r.Undo) && r.Runner != "helm" {
		p.Addf("%s: chart, release, values and undo are for the helm runner", what)
	}
	if r.TrustOnFirstUse && r.Runner != "ssh" {
		p.Addf("%s: trust_on_first_use is for the ssh runner (ansible reads only pinned host keys)", what)
	}
	validDuration(r.Timeout, what+" timeout", p)
}

func validateProbe(pr Probe, p *Problems) {
	switch pr.Type {
	case "command":
		if pr.Script == "" {
			p.Addf("probe %s: a command probe needs a script", pr.Name)
		}
	case "http":
		if pr.URL == "" {
			p.Addf("probe %s: an http probe needs a url", pr.Name)
		}
	case "resource_state":
		if pr.Field == "" {
			p.Addf("probe %s: a resource_state probe needs a field", pr.Name)
		}
	case "capability":
		if pr.Capability == "" || pr.Requirement == "" {
			p.Addf("probe %s: a capability probe needs a capability and a requirement", pr.Name)
		}
	case "tcp":
		if pr.Target == "" || pr.Port < 1 || pr.Port > 65535 {
			p.Addf("probe %s: a tcp probe needs a target and a port", pr.Name)
		}
	case "ssh_command":
		if pr.Target == "" || pr.Script == "" {
			p.Addf("probe %s: an ssh_command probe needs a target and a script", pr.Name)
		}
	case "file":
		if pr.Target == "" || !strings.HasPrefix(pr.Path, "/") {
			p.Addf("probe %s: a file probe needs a target and an absolute path", pr.Name)
		}
	case "service":
		if pr.Target == "" || !strings.HasPrefix(pr.Pidfile, "/") {
			p.Addf("probe %s: a service probe needs a target and an absolute pidfile", pr.Name)
		}
	case "kubernetes":
		switch {
		case pr.Drift && (pr.Object != nil || pr.Absent || pr.Field != ""):
			p.Addf("probe %s: a drift probe reads the objects the resource's operations applied: it names no object, field or absent", pr.Name)
		case pr.Drift && pr.Target == "":
			p.Addf("probe %s: a drift probe needs a target", pr.Name)
		case !pr.Drift && (pr.Target == "" || pr.Object == nil || pr.Object.APIVersion == "" || pr.Object.Kind == "" || pr.Object.Name == ""):
			p.Addf("probe %s: a kubernetes probe needs a target and an object (api_version, kind, name), or drift", pr.Name)
		}
	case "s3":
		if pr.Target == "" || pr.Bucket == "" {
			p.Addf("probe %s: an s3 probe needs a target and a bucket", pr.Name)
		}
	case "postgres":
		if pr.Target == "" || pr.PasswordArtifact == "" {
			p.Addf("probe %s: a postgres probe needs a target and a password_artifact", pr.Name)
		}
	case "sim":
	default:
		p.Addf("probe %s: unknown type %q (want command, http, resource_state, capability, tcp, ssh_command, file, service, kubernetes, s3, postgres or sim)", pr.Name, pr.Type)
	}
	if (pr.User != "" || pr.Database != "" || pr.PasswordArtifact != "") && pr.Type != "postgres" {
		p.Addf("probe %s: user, database and password_artifact are for postgres probes", pr.Name)
	}
	if pr.Bucket != "" && pr.Type != "s3" {
		p.Addf("probe %s: bucket is for s3 probes", pr.Name)
	}
	if pr.Drift && pr.Type != "kubernetes" {
		p.Addf("probe %s: drift is for kubernetes probes", pr.Name)
	}
	if pr.Observes != "" && !observes(pr) {
		p.Addf("probe %s: a %s probe observes no value (file: its sha256; service: running; ssh_command: its output; http: its json_path's value)", pr.Name, pr.Type)
	}
	if pr.Target != "" && pr.Type == "http" && !strings.Contains(pr.URL, "${target.address}") {
		p.Addf("probe %s: an http probe with a target says where in its url: ${target.address}", pr.Name)
	}
}

// observes reports whether a probe reads a value it can compare with a
// desired-state field.
func observes(pr Probe) bool {
	switch pr.Type {
	case "file", "service", "ssh_command":
		return true
	case "http":
		return pr.JSONPath != ""
	}
	return false
}

func validDuration(s, what string, p *Problems) {
	if s == "" {
		return
	}
	if d, err := time.ParseDuration(s); err != nil || d < 0 {
		p.Addf("%s %q is not a duration", what, s)
	}
}

// Validate checks the scenario's own structure: node ids, node settings,
// references between nodes and to requirements, and invariant 6 for its
// requirements. DAG acyclicity is checked by the dag package.
func (s *Scenario) Validate(capabilities map[string]*CapabilityDefinition) error {
	var p Problems
	if !ValidKey(s.ID) {
		p.Addf("id %q is not a valid key", s.ID)
	}
	if !ValidSemver(s.Version) {
		p.Addf("version %q is not semver", s.Version)
	}
	if !ValidKey(s.Action) {
		p.Addf("action %q is not a valid key", s.Action)
	}
	reqs := map[string]bool{}
	workloads := 0
	for i := range s.Requires {
		r := &s.Requires[i]
		if reqs[r.ID] {
			p.Addf("requirement %s is declared twice", r.ID)
		}
		reqs[r.ID] = true
		if r.Workload {
			workloads++
		}
		if r.Provider != "" {
			p.Addf("requirement %s names provider %s: a template never names a provider (invariant 6)", r.ID, r.Provider)
		}
		if err := r.Validate(capabilities[r.Capability]); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
	}
	if workloads > 1 {
		p.Addf("more than one requirement is marked workload")
	}
	s.checkProvided(reqs, &p)
	s.checkPasswordArtifacts(&p)
	ValidateGraph(s.Plan.Nodes, s.Plan.Edges, reqs, &p)
	return p.Err("scenario " + s.Ref())
}

// checkProvided holds the placeholders of what the scenario provides
// to what it has: its own requirements and its jobs' secret artifacts.
func (s *Scenario) checkProvided(reqs map[string]bool, p *Problems) {
	secrets := map[string]bool{}
	for _, n := range s.Plan.Nodes {
		if n.Job != nil {
			for _, a := range n.Job.Outputs.Artifacts {
				secrets[a.Name] = a.Sensitivity == SensitivitySecret
			}
		}
	}
	for _, pc := range s.Provides {
		for _, k := range sortedKeys(pc.Attributes) {
			refs, err := ProvidedRefs(pc.Attributes[k])
			if err != nil {
				p.Addf("provides %s.%s: %v", pc.Capability, k, err)
			}
			for _, r := range refs {
				switch secret, ok := secrets[r.Artifact]; {
				case r.Artifact == "" && !reqs[r.Binding]:
					p.Addf("provides %s.%s: %s names no requirement of the scenario", pc.Capability, k, r)
				case r.Artifact != "" && !ok:
					p.Addf("provides %s.%s: %s names no job's output artifact", pc.Capability, k, r)
				case r.Artifact != "" && !secret:
					p.Addf("provides %s.%s: %s is not a secret artifact: only a secret's reference is kept in an attribute", pc.Capability, k, r)
				}
			}
		}
	}
}

// checkPasswordArtifacts holds each postgres probe's password_artifact to
// a secret artifact one of the scenario's jobs produces.
func (s *Scenario) checkPasswordArtifacts(p *Problems) {
	secrets := map[string]bool{}
	var probes []Probe
	for _, n := range s.Plan.Nodes {
		if n.Job != nil {
			for _, a := range n.Job.Outputs.Artifacts {
				secrets[a.Name] = a.Sensitivity == SensitivitySecret
			}
			probes = append(probes, n.Job.Outputs.Evidence...)
		}
		probes = append(probes, n.Probes...)
	}
	for _, pr := range probes {
		if pr.PasswordArtifact != "" && !secrets[pr.PasswordArtifact] {
			p.Addf("probe %s: password_artifact %s is no secret artifact of the scenario's jobs", pr.Name, pr.PasswordArtifact)
		}
	}
}

// ValidateGraph checks nodes and edges of a template or plan: unique ids,
// each node's settings, edge and child references, and requirement
// references (reqs nil skips that check).
func ValidateGraph(nodes []PlanNode, edges []Edge, reqs map[string]bool, p *Problems) {
	ids := map[string]*PlanNode{}
	for i := range nodes {
		n := &nodes[i]
		if ids[n.ID] != nil {
			p.Addf("node %s is declared twice", n.ID)
		}
		ids[n.ID] = n
		if err := n.Validate(); err != nil {
			*p = append(*p, ErrorDetails(err)...)
		}
	}
	artifacts := map[string]bool{}
	for _, n := range nodes {
		if n.Job != nil {
			for _, a := range n.Job.Outputs.Artifacts {
				artifacts[a.Name] = true
			}
		}
	}
	parent := map[string]string{}
	for _, n := range nodes {
		if n.Analysis != nil {
			for _, in := range n.Analysis.Inputs {
				if !artifacts[in] {
					p.Addf("node %s: analysis input %s is no job's output artifact", n.ID, in)
				}
			}
		}
		for _, c := range n.Children {
			switch {
			case ids[c] == nil:
				p.Addf("stage %s: child %s does not exist", n.ID, c)
			case c == n.ID:
				p.Addf("stage %s contains itself", n.ID)
			case parent[c] != "":
				p.Addf("node %s is a child of both %s and %s", c, parent[c], n.ID)
			default:
				parent[c] = n.ID
			}
		}
		if dup := duplicate(n.Children); dup != "" {
			p.Addf("stage %s lists child %s twice", n.ID, dup)
		}
		for _, a := range n.After {
			if ids[a] == nil {
				p.Addf("node %s: after %s, which does not exist", n.ID, a)
			}
		}
		for _, r := range n.Requires {
			if reqs != nil && !reqs[r] {
				p.Addf("node %s requires %s, which is not a requirement of the scenario", n.ID, r)
			}
		}
		for _, target := range n.Targets() {
			if !slices.Contains(n.Requires, target) {
				p.Addf("node %s acts on target %s, which it does not require: add it to requires", n.ID, target)
			}
		}
	}
	// Each node has one parent at most, so a walk up its parents either
	// ends or comes back: a stage that contains itself through others.
	for _, n := range nodes {
		seen := map[string]bool{n.ID: true}
		for up := parent[n.ID]; up != ""; up = parent[up] {
			if seen[up] {
				if up == n.ID {
					p.Addf("stage %s contains itself through its children", n.ID)
				}
				break
			}
			seen[up] = true
		}
	}
	for _, e := range edges {
		if ids[e.From] == nil || ids[e.To] == nil {
			p.Addf("edge %s -> %s refers to a missing node", e.From, e.To)
		}
		if e.From == e.To {
			p.Addf("edge %s -> %s is a self loop", e.From, e.To)
		}
	}
}

// AllEdges returns the explicit edges plus those given by each node's After.
func AllEdges(nodes []PlanNode, edges []Edge) []Edge {
	out := append([]Edge(nil), edges...)
	seen := map[Edge]bool{}
	for _, e := range out {
		seen[e] = true
	}
	for _, n := range nodes {
		for _, a := range n.After {
			e := Edge{From: a, To: n.ID}
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// Validate checks a pack: id, semver version, its types, capabilities,
// scenarios and policies, and that every scenario's version is the pack's.
func (pk *ScenarioPack) Validate(known map[string]*CapabilityDefinition) error {
	var p Problems
	if !ValidKey(pk.ID) {
		p.Addf("id %q is not a valid key", pk.ID)
	}
	if !ValidSemver(pk.Version) {
		p.Addf("version %q is not semver", pk.Version)
	}
	caps := map[string]*CapabilityDefinition{}
	for k, v := range known {
		caps[k] = v
	}
	for i := range pk.Capabilities {
		c := &pk.Capabilities[i]
		if err := c.Validate(); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
		caps[c.Key] = c
	}
	for i := range pk.ResourceTypes {
		if err := pk.ResourceTypes[i].Validate(); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
	}
	seen := map[string]bool{}
	for i := range pk.Scenarios {
		s := &pk.Scenarios[i]
		if seen[s.ID] {
			p.Addf("scenario %s is declared twice", s.ID)
		}
		seen[s.ID] = true
		if s.Version != pk.Version {
			p.Addf("scenario %s has version %s but the pack is %s", s.ID, s.Version, pk.Version)
		}
		if err := s.Validate(caps); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
	}
	tnames := map[string]bool{}
	for i := range pk.NodeTemplates {
		t := &pk.NodeTemplates[i]
		if !ValidKey(t.Name) || tnames[t.Name] {
			p.Addf("node template %q needs a valid, unique name", t.Name)
		}
		tnames[t.Name] = true
		n := t.Node
		n.ID = t.Name
		if err := n.Validate(); err != nil {
			for _, d := range ErrorDetails(err) {
				p.Addf("node template %s: %s", t.Name, d)
			}
		}
		if len(n.After) > 0 || len(n.Children) > 0 || len(n.Requires) > 0 {
			p.Addf("node template %s: a template node has no after, children or requires (the change places it)", t.Name)
		}
		for _, k := range t.Parameters {
			if _, ok := n.Parameters[k]; !ok {
				p.Addf("node template %s: parameter %s has no default in the node's parameters", t.Name, k)
			}
		}
	}
	for i := range pk.PatchPolicies {
		if err := pk.PatchPolicies[i].Validate(); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
	}
	for i := range pk.FailureRules {
		if err := pk.FailureRules[i].Validate(); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
	}
	for _, pol := range pk.Policies {
		if !ValidKey(pol.ID) || pol.Require == "" {
			p.Addf("policy %q needs a valid id and a require expression", pol.ID)
		}
	}
	return p.Err(fmt.Sprintf("pack %s", pk.Ref()))
}

// duplicate returns a value listed twice, or "".
func duplicate(s []string) string {
	seen := map[string]bool{}
	for _, x := range s {
		if seen[x] {
			return x
		}
		seen[x] = true
	}
	return ""
}
