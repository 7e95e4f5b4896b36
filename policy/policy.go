// Package policy evaluates pack policies, written in CEL (cel-go), over
// candidate providers. A policy applies to requirements of its capability
// when its `when` expression holds; a candidate then passes only if its
// `require` expression holds.
//
// Variables: intent (action, target, target_key — the resource the
// intent's operation changes —, environment, production — whether the
// environment is declared production —, constraints, desired_result),
// requirement (id, capability, constraints) and provider (kind, key,
// type, name, environment, lifecycle, scope, attributes, consumers — the
// keys of the other resources that run on, depend on, use or connect to
// it, at most capstan.MaxConsumers of them, and more_consumers when there
// are more; the intent's own resource and what is part_of it are not
// counted, so re-applying a workload keeps its provider). A policy may
// give explain, a string expression saying why a candidate fails require
// (cel-go's string extensions, so join works); its text, cut at
// maxExplained bytes, follows the description.
package policy

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"

	"github.com/capstan-dev/capstan"
)

var env = sync.OnceValues(func() (*cel.Env, error) {
	m := cel.MapType(cel.StringType, cel.DynType)
	return cel.NewEnv(cel.Variable("intent", m), cel.Variable("requirement", m), cel.Variable("provider", m), ext.Strings())
})

// Compiled is a policy ready to evaluate.
type Compiled struct {
	Policy  capstan.Policy
	when    cel.Program
	require cel.Program
	explain cel.Program // nil when the policy gives none
}

// Compile checks that a policy's expressions parse, type-check and yield bool.
func Compile(p capstan.Policy) (*Compiled, error) {
	e, err := env()
	if err != nil {
		return nil, capstan.Wrap("policy.Compile", err)
	}
	c := &Compiled{Policy: p}
	if p.When != "" {
		if c.when, err = program(e, p.ID, "when", p.When); err != nil {
			return nil, err
		}
	}
	if c.require, err = program(e, p.ID, "require", p.Require); err != nil {
		return nil, err
	}
	if p.Explain != "" {
		if c.explain, err = programOf(e, p.ID, "explain", p.Explain, cel.StringType); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func program(e *cel.Env, id, which, expr string) (cel.Program, error) {
	return programOf(e, id, which, expr, cel.BoolType)
}

func programOf(e *cel.Env, id, which, expr string, want *cel.Type) (cel.Program, error) {
	ast, iss := e.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "policy %s: %s expression: %v", id, which, iss.Err())
	}
	out := ast.OutputType()
	if !out.IsExactType(want) && (want == cel.BoolType || !out.IsExactType(cel.DynType)) { // a string may come out dyn, checked when evaluated
		return nil, capstan.Errorf(capstan.EINVALID, "policy %s: %s expression must be %v, is %v", id, which, want, out)
	}
	prg, err := e.Program(ast)
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "policy %s: %s expression: %v", id, which, err)
	}
	return prg, nil
}

// Set is the compiled policies of an organization.
type Set []*Compiled

// CompileAll compiles policies, returning every problem.
func CompileAll(ps []*capstan.Policy) (Set, error) {
	var out Set
	var probs capstan.Problems
	for _, p := range ps {
		c, err := Compile(*p)
		if err != nil {
			probs.Addf("%s", capstan.ErrorMessage(err))
			continue
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Policy.ID < out[j].Policy.ID })
	return out, probs.Err("policies")
}

// Input is what policies see about one candidate.
type Input struct {
	Intent      map[string]any
	Requirement map[string]any
	Provider    map[string]any
}

// Evaluate runs every policy that applies to capability on one candidate and
// returns a verdict for each.
func (s Set) Evaluate(capability string, in Input) []capstan.PolicyVerdict {
	vars := map[string]any{"intent": in.Intent, "requirement": in.Requirement, "provider": in.Provider}
	var out []capstan.PolicyVerdict
	for _, c := range s {
		if c.Policy.Capability != "" && c.Policy.Capability != capability {
			continue
		}
		if c.when != nil {
			applies, err := evalBool(c.when, vars)
			if err != nil {
				out = append(out, capstan.PolicyVerdict{Policy: c.Policy.ID, Reason: fmt.Sprintf("%s: when could not be evaluated: %v", c.Policy.ID, err)})
				continue
			}
			if !applies {
				continue
			}
		}
		ok, err := evalBool(c.require, vars)
		v := capstan.PolicyVerdict{Policy: c.Policy.ID, Passed: ok && err == nil}
		switch {
		case err != nil:
			v.Reason = fmt.Sprintf("%s: %s (not satisfied: %v)", c.Policy.ID, c.Policy.Description, err)
		case ok:
			v.Reason = fmt.Sprintf("%s: satisfied", c.Policy.ID)
		default:
			v.Reason = fmt.Sprintf("%s: %s", c.Policy.ID, c.explained(vars))
		}
		out = append(out, v)
	}
	return out
}

// explained is the description of a policy a candidate fails, followed
// by what its explain expression says (or why it could not say it).
func (c *Compiled) explained(vars map[string]any) string {
	if c.explain == nil {
		return c.Policy.Description
	}
	desc := strings.TrimSuffix(c.Policy.Description, ".")
	out, _, err := c.explain.Eval(vars)
	if err != nil {
		return fmt.Sprintf("%s (explain could not be evaluated: %v).", desc, err)
	}
	text, ok := out.Value().(string)
	if !ok || text == "" {
		return c.Policy.Description
	}
	if len(text) > maxExplained {
		text = strings.ToValidUTF8(text[:maxExplained], "") + "…"
	}
	return desc + ": " + text + "."
}

// maxExplained bounds what explain adds to a verdict: every plan stores
// its candidates' verdicts.
const maxExplained = 500

func evalBool(p cel.Program, vars map[string]any) (bool, error) {
	out, _, err := p.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("result %v is not bool", out.Value())
	}
	return b, nil
}
