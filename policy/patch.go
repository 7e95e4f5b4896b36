package policy

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"

	"github.com/capstan-dev/capstan"
)

// Patch policies see `patch` (author, author_is_agent, author_roles,
// environment, production, ops, nodes, node_types, templates, inline, changes,
// started) and `intent` (action, target, environment, production, mode).
var patchEnv = sync.OnceValues(func() (*cel.Env, error) {
	m := cel.MapType(cel.StringType, cel.DynType)
	return cel.NewEnv(cel.Variable("patch", m), cel.Variable("intent", m))
})

// CompiledPatch is a patch policy ready to evaluate.
type CompiledPatch struct {
	Policy capstan.PatchPolicy
	when   cel.Program
}

// PatchSet is the compiled patch policies of an organization.
type PatchSet []*CompiledPatch

// CompilePatches compiles patch policies, returning every problem.
func CompilePatches(ps []capstan.PatchPolicy) (PatchSet, error) {
	e, err := patchEnv()
	if err != nil {
		return nil, capstan.Wrap("policy.CompilePatches", err)
	}
	var out PatchSet
	var probs capstan.Problems
	for _, p := range ps {
		if err := p.Validate(); err != nil {
			probs = append(probs, capstan.ErrorDetails(err)...)
			continue
		}
		prg, err := program(e, p.ID, "when", p.When)
		if err != nil {
			probs.Addf("%s", capstan.ErrorMessage(err))
			continue
		}
		out = append(out, &CompiledPatch{Policy: p, when: prg})
	}
	return out, probs.Err("patch policies")
}

// PatchVerdict is one policy that holds for a change set.
type PatchVerdict struct {
	Policy capstan.PatchPolicy
	// Err is set when the policy could not be evaluated: it is then a
	// rejection (a policy that cannot be read never lets a change through).
	Err error
}

// Evaluate returns every policy whose when holds for the change set.
func (s PatchSet) Evaluate(patch, intent map[string]any) []PatchVerdict {
	vars := map[string]any{"patch": patch, "intent": intent}
	var out []PatchVerdict
	for _, c := range s {
		ok, err := evalBool(c.when, vars)
		switch {
		case err != nil:
			p := c.Policy
			p.Effect = capstan.PatchReject
			out = append(out, PatchVerdict{Policy: p, Err: fmt.Errorf("patch policy %s: when could not be evaluated: %w", c.Policy.ID, err)})
		case ok:
			out = append(out, PatchVerdict{Policy: c.Policy})
		}
	}
	return out
}
