package modelanalyzer

import (
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
)

// systemPrompt tells the model its role and limits; the schema carries
// the shape of the answer.
var systemPrompt = `You diagnose failed infrastructure operations for Capstan, a control plane. You never execute anything: you read the operation's records and answer with one JSON object in the given schema.

Rules:
- Every finding cites at least one record it rests on: an evidence id ("evidence"), a node id of the plan ("node"), or a resource key from the catalog facts ("resource"). Cite only ids that appear in the records; a finding citing anything else is dropped.
- kind is "patch" only when proposed_patch holds changes; otherwise proposed_patch is empty.
- A change uses only these ops: ` + strings.Join(capstan.ChangeOps, ", ") + `. An inserted or replacing node comes only from a template in the list given, by its name. Never propose removing or skipping a gate or weakening an approval: such changes are refused.
- Parameter values are JSON ("text", 3, true).
- Names like MASK_1 stand for masked names: use them as they are.
- If the records do not show the cause, say so in the diagnosis and recommend what to check.`

// userPrompt is the operation's records as JSON: runs, evidence, the
// tails of the output named as inputs, the plan's DAG, the templates a
// proposal may use and the catalog facts of its resources.
func userPrompt(in analysis.Input, sc scrubber) (string, error) {
	type run struct {
		Node     string `json:"node"`
		Status   string `json:"status"`
		Attempts int    `json:"attempts"`
		Error    string `json:"error,omitempty"`
	}
	type evidence struct {
		ID     string `json:"id"`
		Node   string `json:"node"`
		Item   string `json:"item"`
		Result string `json:"result"`
	}
	type output struct {
		Node string `json:"node"`
		Name string `json:"name"`
		Tail string `json:"tail"`
	}
	type node struct {
		ID        string   `json:"id"`
		Type      string   `json:"type"`
		Name      string   `json:"name,omitempty"`
		DependsOn []string `json:"depends_on,omitempty"`
	}
	type template struct {
		Name        string   `json:"name"`
		Description string   `json:"description,omitempty"`
		Parameters  []string `json:"parameters,omitempty"`
	}
	doc := struct {
		Question  string     `json:"question"`
		Operation string     `json:"operation"`
		Node      string     `json:"asking_node,omitempty"`
		Runs      []run      `json:"node_runs"`
		Evidence  []evidence `json:"evidence"`
		Outputs   []output   `json:"outputs,omitempty"`
		Plan      []node     `json:"plan_nodes,omitempty"`
		Templates []template `json:"templates"`
		Resources []any      `json:"resources,omitempty"`
	}{Question: in.Question, Operation: in.OperationID, Node: in.Node, Templates: []template{}}
	for _, r := range in.Runs {
		doc.Runs = append(doc.Runs, run{r.NodeID, string(r.Status), r.Attempts, r.Error})
	}
	for _, e := range in.Evidence {
		doc.Evidence = append(doc.Evidence, evidence{e.ID, e.ProducedBy, e.Item, e.Result})
	}
	for _, a := range in.Artifacts {
		doc.Outputs = append(doc.Outputs, output{a.ProducedBy, a.Name, string(a.Content)})
	}
	if in.Plan != nil {
		deps := map[string][]string{}
		for _, e := range in.Plan.Edges {
			deps[e.To] = append(deps[e.To], e.From)
		}
		for _, n := range in.Plan.Nodes {
			doc.Plan = append(doc.Plan, node{n.ID, string(n.Type), n.Title, deps[n.ID]})
		}
	}
	for _, t := range in.Templates {
		doc.Templates = append(doc.Templates, template{t.Name, t.Description, t.Parameters})
	}
	for _, r := range resources(in) {
		doc.Resources = append(doc.Resources, resourceFacts(r))
	}
	return sc.encode(doc, true)
}

// resources are the resources the model is shown.
func resources(in analysis.Input) []*capstan.Resource {
	out := make([]*capstan.Resource, 0, len(in.Resources)+1)
	if in.Resource != nil {
		out = append(out, in.Resource)
	}
	for _, r := range in.Resources {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

// resourceFacts is what the model sees of a resource: its catalog facts
// (scrubbed on the way out: a literal secret, which should not be there
// at all, is masked at any depth).
func resourceFacts(r *capstan.Resource) map[string]any {
	caps := make([]map[string]any, 0, len(r.ProvidedCapabilities))
	for _, pc := range r.ProvidedCapabilities {
		caps = append(caps, map[string]any{"capability": pc.Capability, "scope": pc.Scope, "attributes": pc.Attributes})
	}
	rels := make([]map[string]any, 0, len(r.Relationships))
	for _, rel := range r.Relationships {
		rels = append(rels, map[string]any{"type": rel.Type, "target": rel.Target})
	}
	return map[string]any{"key": r.Key(), "type": r.Type, "environment": r.Environment, "lifecycle": r.LifecycleStatus,
		"health": r.HealthStatus, "capabilities": caps, "relationships": rels}
}
