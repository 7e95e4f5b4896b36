package modelanalyzer

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
)

// The model's tools read; none changes state. Each call is recorded in
// the analysis (AnalysisModel.ToolCalls), its result is masked like the
// prompt, and the rounds are capped (Config.MaxToolRounds).

// maxToolResult bounds what one tool call returns to the model.
const maxToolResult = 16 << 10

// tool names.
const (
	toolNodeOutput   = "node_output"
	toolResource     = "resource"
	toolDependencies = "dependencies"
	toolEvidence     = "evidence"
)

func toolParams() []openai.ChatCompletionToolUnionParam {
	one := func(name, desc, arg, argDesc string) openai.ChatCompletionToolUnionParam {
		return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: name, Description: openai.String(desc), Strict: openai.Bool(true),
			Parameters: shared.FunctionParameters{"type": "object", "additionalProperties": false, "required": []string{arg},
				"properties": map[string]any{arg: map[string]any{"type": "string", "description": argDesc}}}})
	}
	return []openai.ChatCompletionToolUnionParam{
		one(toolNodeOutput, "The tail of the output a node's job wrote.", "node", "a node id of the plan"),
		one(toolResource, "A catalog resource's facts: type, environment, lifecycle, health, capabilities, relationships.", "key", "a resource key, type/name"),
		one(toolDependencies, "The resources a resource depends on, runs on or uses, with their facts.", "key", "a resource key, type/name"),
		one(toolEvidence, "One evidence record of the operation, whole.", "id", "an evidence id"),
	}
}

// toolCall is a recorded call, and the id the answer to it carries.
type toolCall struct {
	capstan.AnalysisToolCall
	callID string
}

func (c toolCall) id() string { return c.callID }

// runTool answers one tool call; an unknown tool or a bad argument is an
// error the model reads, not a failure of the analysis. Arguments are
// unmasked before they are looked up.
func runTool(ctx context.Context, in *executor.AnalysisInput, m *masker, id, name, args string) (string, toolCall) {
	call := toolCall{AnalysisToolCall: capstan.AnalysisToolCall{Tool: name, Arguments: truncate(args, 200)}, callID: id}
	var arg map[string]string
	if err := json.Unmarshal([]byte(args), &arg); err != nil {
		call.Error = "arguments are not a JSON object of strings"
		return toolError("%s", call.Error), call
	}
	result, err := lookup(ctx, in, name, arg, m)
	if err != nil {
		call.Error = capstan.ErrorMessage(err)
		return toolError("%s", call.Error), call
	}
	data, _ := json.Marshal(result)
	if len(data) > maxToolResult {
		return string(data[:maxToolResult]), call
	}
	return string(data), call
}

func lookup(ctx context.Context, in *executor.AnalysisInput, name string, arg map[string]string, m *masker) (any, error) {
	switch name {
	case toolNodeOutput:
		node := m.unmask(arg["node"])
		if !citable(*in)["node:"+node] {
			return nil, capstan.Errorf(capstan.ENOTFOUND, "the plan has no node %q", node)
		}
		return in.Lookup.NodeOutput(ctx, node)
	case toolResource, toolDependencies:
		r, err := in.Lookup.Resource(ctx, m.unmask(arg["key"]))
		if err != nil {
			return nil, err
		}
		in.Resources = append(in.Resources, r) // now citable
		if name == toolResource {
			return resourceFacts(r), nil
		}
		deps := []any{}
		for _, rel := range r.Relationships[:min(len(r.Relationships), 20)] {
			if d, err := in.Lookup.Resource(ctx, rel.Target); err == nil {
				in.Resources = append(in.Resources, d)
				deps = append(deps, map[string]any{"relationship": rel.Type, "resource": resourceFacts(d)})
			}
		}
		return deps, nil
	case toolEvidence:
		id := m.unmask(arg["id"])
		for _, e := range in.Evidence {
			if e.ID == id {
				return e, nil
			}
		}
		return nil, capstan.Errorf(capstan.ENOTFOUND, "the operation has no evidence %q", id)
	}
	return nil, capstan.Errorf(capstan.EINVALID, "no tool %q", name)
}

// truncate cuts s to n bytes at most, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
