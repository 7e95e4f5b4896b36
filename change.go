package capstan

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// The one change vocabulary of plan edits before start, PlanPatches after,
// and analyzer proposals (SPEC §10).
const (
	ChangeInsertAfter   = "insert_after"
	ChangeInsertBefore  = "insert_before"
	ChangeRemove        = "remove"
	ChangeReplace       = "replace"
	ChangeRetry         = "retry"
	ChangeSkip          = "skip"
	ChangeSetParameters = "set_parameters"
	ChangeAddEdge       = "add_edge"
	ChangeRemoveEdge    = "remove_edge"
	ChangeRebind        = "rebind"
)

// ChangeOps lists the vocabulary in its documented order.
var ChangeOps = []string{ChangeInsertAfter, ChangeInsertBefore, ChangeRemove, ChangeReplace, ChangeRetry, ChangeSkip,
	ChangeSetParameters, ChangeAddEdge, ChangeRemoveEdge, ChangeRebind}

// RunChange reports whether op acts on an operation's node runs rather
// than on the plan's content (retry, skip): it needs a started operation.
func RunChange(op string) bool { return op == ChangeRetry || op == ChangeSkip }

// PlanChange is one change of the vocabulary.
type PlanChange struct {
	Op string `json:"op"`
	// Node is the node the change is about: the one removed, replaced,
	// retried, skipped or given parameters, or the anchor of an insert.
	Node string `json:"node,omitempty"`
	// Template names the node template (published by an installed pack)
	// an insert or a replace takes its node from; NodeID is the id of an
	// inserted node (default: the template's name).
	Template string `json:"template,omitempty"`
	// TemplateRef pins the template version the change was made with
	// (pack@version/name, filled in when the change is proposed): an
	// approval holds for that node, not for whatever a later pack publishes.
	TemplateRef string `json:"template_ref,omitempty"`
	NodeID      string `json:"node_id,omitempty"`
	// Spec is a node written inline instead of a template: one that runs
	// a script, a command or a URL needs the job-authoring permission.
	Spec *PlanNode `json:"spec,omitempty"`
	// Parameters are the values set (a null removes the key), or the
	// parameters of a template.
	Parameters map[string]any `json:"parameters,omitempty"`
	Edge       *Edge          `json:"edge,omitempty"`
	// Requirement (a binding id) and Provider (a resource key) of a rebind.
	Requirement string `json:"requirement,omitempty"`
	Provider    string `json:"provider,omitempty"`
	Reason      string `json:"reason,omitempty"`
	// Actor, At and Revision stamp a change once it made a revision.
	Actor    string    `json:"actor,omitempty"`
	At       time.Time `json:"at,omitzero"`
	Revision int       `json:"revision,omitempty"`
}

// NewNodeID is the id of the node an insert adds.
func (c *PlanChange) NewNodeID() string {
	switch {
	case c.NodeID != "":
		return c.NodeID
	case c.Spec != nil:
		return c.Spec.ID
	}
	return c.Template
}

// String is the change in one line: "insert_after install-containerd: configure-registry-mirror".
func (c PlanChange) String() string {
	var b strings.Builder
	b.WriteString(c.Op)
	switch {
	case c.Edge != nil:
		fmt.Fprintf(&b, " %s -> %s", c.Edge.From, c.Edge.To)
	case c.Op == ChangeRebind:
		fmt.Fprintf(&b, " %s to %s", c.Requirement, c.Provider)
	case c.Node != "":
		b.WriteString(" " + c.Node)
	}
	if c.Op == ChangeInsertAfter || c.Op == ChangeInsertBefore || c.Op == ChangeReplace {
		if c.Template != "" {
			b.WriteString(": template " + c.Template)
		} else if c.Spec != nil {
			b.WriteString(": inline node " + c.Spec.ID)
		}
	}
	return b.String()
}

// CheckShape reports what is missing from or foreign to a change of its
// op, before any plan is looked at.
func (c *PlanChange) CheckShape() []string {
	var p Problems
	if !slices.Contains(ChangeOps, c.Op) {
		p.Addf("op %q is not one of %s", c.Op, strings.Join(ChangeOps, ", "))
		return p
	}
	needNode := func() {
		if c.Node == "" {
			p.Addf("%s needs a node", c.Op)
		}
	}
	switch c.Op {
	case ChangeInsertAfter, ChangeInsertBefore:
		needNode()
		if (c.Template == "") == (c.Spec == nil) {
			p.Addf("%s needs a template or an inline spec, not both", c.Op)
		}
		if id := c.NewNodeID(); !ValidKey(id) {
			p.Addf("%s: the new node's id %q is not a valid key", c.Op, id)
		}
	case ChangeReplace:
		needNode()
		if (c.Template == "") == (c.Spec == nil) {
			p.Addf("replace needs a template or an inline spec, not both")
		}
		if c.Spec != nil && c.Spec.ID != "" && c.Spec.ID != c.Node {
			p.Addf("replace keeps the node's id: the spec's id %s is not %s (remove and insert to rename)", c.Spec.ID, c.Node)
		}
	case ChangeRemove, ChangeRetry:
		needNode()
	case ChangeSkip:
		needNode()
		if strings.TrimSpace(c.Reason) == "" {
			p.Addf("skip needs a reason")
		}
	case ChangeSetParameters:
		if len(c.Parameters) == 0 {
			p.Addf("set_parameters needs parameters")
		}
	case ChangeAddEdge, ChangeRemoveEdge:
		if c.Edge == nil || c.Edge.From == "" || c.Edge.To == "" {
			p.Addf("%s needs an edge (from and to)", c.Op)
		}
	case ChangeRebind:
		if c.Requirement == "" {
			p.Addf("rebind needs a requirement")
		}
		if _, _, ok := SplitResourceKey(c.Provider); !ok {
			p.Addf("rebind: provider %q is not a resource key (type/name)", c.Provider)
		}
	}
	return p
}

// Rules a change may break. Governance rules (Forbidden) are refused with
// FORBIDDEN unless a policy allows them; the others make the change set
// invalid.
const (
	RuleShape           = "shape"
	RuleGraph           = "graph"
	RuleHistory         = "history"
	RuleRunning         = "running-node"
	RuleBindings        = "bindings"
	RuleContract        = "contract"
	RuleSkipDependents  = "skip-dependents"
	RuleTemplate        = "template"
	RuleKeepGate        = "keep-gate"
	RuleKeepGateRoles   = "keep-gate-roles"
	RuleKeepEvidence    = "keep-evidence"
	RuleKeepSubOp       = "keep-sub-operation"
	RuleParametersOnly  = "parameters-only"
	RuleInlineCode      = "inline-code"
	RuleInlineCodeProd  = "inline-code-prod"
	RuleRunChangeBefore = "run-change-before-start"
	// RuleRejectedByPolicy is a pack patch policy's reject: no policy
	// waives it.
	RuleRejectedByPolicy = "rejected-by-policy"
)

// ForbiddenRules are the governance rules (SPEC §10): a change that breaks
// one weakens the plan or brings code the author may not bring.
var ForbiddenRules = []string{RuleKeepGate, RuleKeepGateRoles, RuleKeepEvidence, RuleKeepSubOp, RuleParametersOnly,
	RuleInlineCode, RuleInlineCodeProd}

// ChangeProblem is one reason a change set is refused: the change (1-based;
// 0 for the set as a whole), the rule and what is wrong.
type ChangeProblem struct {
	Change  int    `json:"change"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Forbidden reports whether the problem is a governance refusal.
func (p ChangeProblem) Forbidden() bool {
	return slices.Contains(ForbiddenRules, p.Rule) || p.Rule == RuleRejectedByPolicy
}

func (p ChangeProblem) String() string {
	if p.Change == 0 {
		return fmt.Sprintf("[%s] %s", p.Rule, p.Message)
	}
	return fmt.Sprintf("change %d [%s]: %s", p.Change, p.Rule, p.Message)
}

// ChangeProblemsErr is the error of a refused change set: FORBIDDEN when
// any problem is a governance refusal, INVALID otherwise; every problem is
// listed in its details. nil when there are none.
func ChangeProblemsErr(what string, probs []ChangeProblem) error {
	if len(probs) == 0 {
		return nil
	}
	code := EINVALID
	details := make([]string, len(probs))
	for i, p := range probs {
		details[i] = p.String()
		if p.Forbidden() {
			code = EFORBIDDEN
		}
	}
	e := Errorf(code, "%s: %s", what, strings.Join(details, "; "))
	e.Details = details
	return e
}

// UnmarshalJSON reads a change, including the form plans recorded before
// the vocabulary was unified (add_node, remove_node, replace_node and
// override_binding, with node_id, an inline node and binding_id), so no
// stored plan becomes unreadable.
func (c *PlanChange) UnmarshalJSON(data []byte) error {
	type plain PlanChange
	var legacy struct {
		Op        string          `json:"op"`
		Node      json.RawMessage `json:"node"`
		NodeID    string          `json:"node_id"`
		BindingID string          `json:"binding_id"`
	}
	if err := json.Unmarshal(data, &legacy); err != nil {
		return err
	}
	op, old := legacyOps[legacy.Op]
	if !old && !(legacy.NodeID != "" && len(legacy.Node) == 0 && legacy.Op == ChangeSetParameters) {
		return json.Unmarshal(data, (*plain)(c))
	}
	var rec struct {
		plain
		Node *PlanNode `json:"node"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return err
	}
	*c = PlanChange(rec.plain)
	c.Node, c.NodeID, c.Spec = legacy.NodeID, "", rec.Node
	if old {
		c.Op = op
	}
	if op == ChangeInsertAfter && rec.Node != nil { // add_node had no anchor
		c.Node, c.NodeID = "", rec.Node.ID
	}
	if legacy.BindingID != "" {
		c.Requirement = legacy.BindingID
	}
	return nil
}

// legacyOps maps the ops of the old edit vocabulary to the new one.
var legacyOps = map[string]string{"add_node": ChangeInsertAfter, "remove_node": ChangeRemove,
	"replace_node": ChangeReplace, "override_binding": ChangeRebind}

// SecretReferences lists the secret:<name> references a change sets: in
// its parameters and in an inline node, at any depth. A job resolves
// each into its environment, so whoever sets one hands the job that
// secret's value.
func (c PlanChange) SecretReferences() []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if strings.HasPrefix(strings.TrimSpace(v), "secret:") {
				out = append(out, strings.TrimSpace(v))
			}
		case map[string]any:
			for k, x := range v {
				walk(k)
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(c.Parameters)
	if c.Spec != nil {
		if data, err := json.Marshal(c.Spec); err == nil {
			var spec any
			if json.Unmarshal(data, &spec) == nil {
				walk(spec)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}
