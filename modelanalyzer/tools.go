package modelanalyzer

import (
	"context"
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/capstan-dev/capstan"
)

// The model's tools read; none changes state. Each call is recorded in
// the analysis (AnalysisModel.ToolCalls), its result is scrubbed like
// the prompt, and calls are bounded: per answer, per analysis, in the
// size of their arguments and of their results. A tool's refusal never
// repeats what the model sent (an argument holding a masked name in the
// clear is refused like an unknown one), so tools cannot confirm a guess
// of a masked name.

const (
	maxToolResult       = 16 << 10 // one result, scrubbed and encoded
	maxToolArguments    = 1 << 10
	maxCallsPerAnswer   = 8
	maxCallsPerAnalysis = 24
	maxDependencies     = 20
)

// tool names.
const (
	toolNodeOutput   = "node_output"
	toolResource     = "resource"
	toolDependencies = "dependencies"
	toolEvidence     = "evidence"
)

// toolDefinitions are the tool definitions every request with tools left offers.
var toolDefinitions = toolParams()

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

// toolArg is each tool's one argument.
var toolArg = map[string]string{toolNodeOutput: "node", toolResource: "key", toolDependencies: "key", toolEvidence: "id"}

// runTool answers one tool call with a scrubbed result (or a refusal the
// model reads) and records it.
func (s *session) runTool(ctx context.Context, name, args string) string {
	call := capstan.AnalysisToolCall{Tool: truncate(name, 64), Arguments: truncate(args, 200)}
	result, refusal := s.lookup(ctx, name, args)
	var out string
	if refusal == "" {
		var err error
		if out, err = s.scrub.encode(result, false); err != nil || len(out) > maxToolResult {
			refusal = "the result is too large to return"
		}
	}
	if refusal != "" {
		call.Error = refusal
		out = `{"error": "` + refusal + `"}`
	}
	s.rec.ToolCalls = append(s.rec.ToolCalls, call)
	return out
}

// lookup reads what a call asks; a refusal is a fixed sentence.
func (s *session) lookup(ctx context.Context, name, args string) (any, string) {
	argName, ok := toolArg[name]
	if !ok {
		return nil, "no such tool"
	}
	if len(args) > maxToolArguments {
		return nil, "the arguments are too long"
	}
	var arg map[string]string
	if err := json.Unmarshal([]byte(args), &arg); err != nil || len(arg) != 1 {
		return nil, "the arguments must be one JSON object with one string: " + argName
	}
	v, ok := arg[argName]
	if !ok || s.mask.changes(v) { // a masked name in the clear: a guess
		return nil, "not found"
	}
	v = s.mask.unmask(v)
	switch name {
	case toolNodeOutput:
		if !s.known["node:"+v] {
			return nil, "not found"
		}
		out, err := s.in.Lookup.NodeOutput(ctx, v)
		if err != nil {
			return nil, "the output cannot be read"
		}
		return out, ""
	case toolResource, toolDependencies:
		r := s.resource(ctx, v)
		if r == nil {
			return nil, "not found"
		}
		if name == toolResource {
			return resourceFacts(r), ""
		}
		deps := []any{}
		for _, rel := range r.Relationships[:min(len(r.Relationships), maxDependencies)] {
			if d := s.resource(ctx, rel.Target); d != nil {
				deps = append(deps, map[string]any{"relationship": rel.Type, "resource": resourceFacts(d)})
			}
		}
		return deps, ""
	}
	for _, e := range s.in.Evidence {
		if e.ID == v {
			return e, ""
		}
	}
	return nil, "not found"
}

// resource reads a resource of the operation's organization, or nil; a
// resource read may be cited.
func (s *session) resource(ctx context.Context, key string) *capstan.Resource {
	r, err := s.in.Lookup.Resource(ctx, key)
	if err != nil || r == nil {
		return nil
	}
	s.known["resource:"+r.Key()] = true
	return r
}
