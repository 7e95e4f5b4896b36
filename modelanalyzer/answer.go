// Package modelanalyzer puts a language model behind the executor's
// Analyzer: any server that speaks OpenAI's Chat Completions (OpenAI,
// Azure, vLLM, Ollama, LiteLLM) through github.com/openai/openai-go/v3,
// with the answer held to a strict JSON schema generated from the Go
// types below. The model diagnoses and proposes; it never executes: its
// answer is checked again here (schema, citations, change vocabulary) and
// then by the executor and the service like any person's proposal.
package modelanalyzer

import (
	"encoding/json"

	"github.com/invopop/jsonschema"

	"github.com/capstan-dev/capstan"
)

// Answer is what the model must return. Strict structured output needs
// every property required and no others, so no field here is omitempty:
// an empty list or string says "none".
type Answer struct {
	Kind           string           `json:"kind" jsonschema:"enum=diagnosis,enum=recommendation,enum=patch,enum=review" jsonschema_description:"patch only when proposed_patch holds changes"`
	Diagnosis      string           `json:"diagnosis" jsonschema_description:"what went wrong, in one or two sentences"`
	Recommendation string           `json:"recommendation" jsonschema_description:"what a person should do next"`
	Findings       []Finding        `json:"findings" jsonschema_description:"the observations the diagnosis rests on, each with its citations"`
	ProposedPatch  []ProposedChange `json:"proposed_patch" jsonschema_description:"plan changes, only from the vocabulary and templates given; empty unless kind is patch"`
	Missing        []string         `json:"missing_capabilities" jsonschema_description:"capabilities found missing, e.g. network.registry_access"`
}

// Finding is one observation with what it cites.
type Finding struct {
	Detail    string     `json:"detail"`
	Citations []Citation `json:"citations" jsonschema_description:"at least one: the records this finding rests on"`
}

// Citation names one record of the operation: an evidence id, a node id
// of the plan, or a resource key of the catalog facts given.
type Citation struct {
	Kind string `json:"kind" jsonschema:"enum=evidence,enum=node,enum=resource"`
	ID   string `json:"id"`
}

// ProposedChange is the part of capstan.PlanChange a model may propose:
// no inline node (a template the packs publish, or nothing), no actor or
// stamp. Its JSON names are PlanChange's (TestProposedChangeIsPlanChange),
// so the two cannot drift.
type ProposedChange struct {
	Op          string      `json:"op"` // enum filled from capstan.ChangeOps
	Node        string      `json:"node"`
	Template    string      `json:"template" jsonschema_description:"a template name from the list given, for insert_after, insert_before, replace"`
	NodeID      string      `json:"node_id"`
	Parameters  []Parameter `json:"parameters"`
	Edge        EdgeRef     `json:"edge" jsonschema_description:"for add_edge and remove_edge; empty strings otherwise"`
	Requirement string      `json:"requirement"`
	Provider    string      `json:"provider"`
	Reason      string      `json:"reason"`
}

// Parameter is one parameter a change sets. Strict mode allows no
// free-form objects, so parameters are pairs with the value as JSON.
type Parameter struct {
	Name  string `json:"name"`
	Value string `json:"value" jsonschema_description:"the value as JSON: \"text\", 3, true, null"`
}

// EdgeRef is an edge of a change.
type EdgeRef struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Schema is the answer's JSON schema for strict structured output: no
// references, no additional properties, every property required, the
// change ops from the vocabulary itself.
func Schema() map[string]any {
	r := jsonschema.Reflector{AllowAdditionalProperties: false, DoNotReference: true, ExpandedStruct: true}
	s := r.Reflect(&Answer{})
	data, err := json.Marshal(s)
	if err != nil {
		panic(err) // a fixed type: cannot fail
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		panic(err)
	}
	delete(m, "$schema")
	delete(m, "$id")
	op := dig(m, "properties", "proposed_patch", "items", "properties", "op")
	ops := make([]any, len(capstan.ChangeOps))
	for i, o := range capstan.ChangeOps {
		ops[i] = o
	}
	op["enum"] = ops
	return m
}

// dig walks nested maps.
func dig(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}

// planChanges turns the proposed changes into PlanChanges; a parameter
// value that is not JSON is a problem of the answer.
func (a *Answer) planChanges() ([]capstan.PlanChange, error) {
	var out []capstan.PlanChange
	var p capstan.Problems
	for i, c := range a.ProposedPatch {
		pc := capstan.PlanChange{Op: c.Op, Node: c.Node, Template: c.Template, NodeID: c.NodeID,
			Requirement: c.Requirement, Provider: c.Provider, Reason: c.Reason}
		if c.Edge.From != "" || c.Edge.To != "" {
			pc.Edge = &capstan.Edge{From: c.Edge.From, To: c.Edge.To}
		}
		for _, prm := range c.Parameters {
			var v any
			if err := json.Unmarshal([]byte(prm.Value), &v); err != nil {
				p.Addf("change %d: parameter %s: its value is not JSON", i+1, prm.Name)
				continue
			}
			if pc.Parameters == nil {
				pc.Parameters = map[string]any{}
			}
			pc.Parameters[prm.Name] = v
		}
		out = append(out, pc)
	}
	return out, p.Err("model answer")
}
