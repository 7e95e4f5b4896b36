package server

import (
	"context"
	"math"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capstan-dev/capstan"
)

// DefaultListSize is the size assumed for a list field the schema gives
// no @listSize.
const DefaultListSize = 10

// costLimit refuses operations whose cost exceeds the limit and charges
// the cost to the caller's rate limit. Cost follows Apollo's demand
// control: every field costs 1 (or its @cost weight), and what is
// selected under a list costs
// once per element — the value of its slicing argument (`first`), or
// the size @listSize assumes, or DefaultListSize. A connection's slicing
// argument sizes its `edges` (sizedFields), not the connection. Nothing
// is recorded in the operation's stats: a subscription keeps its
// operation context for as long as it lives.
type costLimit struct {
	limit  int
	schema *ast.Schema
	rate   *rateLimiter
}

var (
	_ graphql.HandlerExtension        = (*costLimit)(nil)
	_ graphql.OperationContextMutator = (*costLimit)(nil)
)

func (c *costLimit) ExtensionName() string { return "CostLimit" }

func (c *costLimit) Validate(schema graphql.ExecutableSchema) error {
	c.schema = schema.Schema()
	return nil
}

func (c *costLimit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if err := ctx.Err(); err != nil { // the request's deadline covers validation too
		err := gqlerror.Errorf("request deadline exceeded")
		err.Extensions = map[string]any{"code": capstan.EUNAVAILABLE}
		return err
	}
	op := oc.Doc.Operations.ForName(oc.OperationName)
	if refs := entityReferences(op, oc.Variables); refs > MaxEntityReferences {
		return limitError(ReasonEntitiesLimit, "_entities asks for %d references, more than the limit of %d: send them in smaller batches", refs, MaxEntityReferences)
	}
	n := OperationCost(op, oc.Variables)
	if n > c.limit {
		return limitError(ReasonCostLimit, "operation costs %d, more than the limit of %d (lists count once per element: lower `first`)", n, c.limit)
	}
	return c.rate.chargeCost(ctx, n)
}

// OperationCost is an operation's cost (see costLimit). It saturates at
// math.MaxInt32.
func OperationCost(op *ast.OperationDefinition, vars map[string]any) int {
	if op == nil {
		return 0
	}
	return setCost(op.SelectionSet, vars, nil)
}

func setCost(set ast.SelectionSet, vars map[string]any, sized map[string]int) int {
	total := 0
	for _, sel := range set {
		if skipped(sel, vars) {
			continue // @skip(if: true) or @include(if: false): never resolved
		}
		switch sel := sel.(type) {
		case *ast.Field:
			size, isSized := sized[sel.Name]
			if !isSized {
				size = -1
			}
			total = add(total, fieldCost(sel, vars, size))
		case *ast.InlineFragment:
			total = add(total, setCost(sel.SelectionSet, vars, sized))
		case *ast.FragmentSpread:
			if sel.Definition != nil {
				total = add(total, setCost(sel.Definition.SelectionSet, vars, sized))
			}
		}
	}
	return total
}

// skipped reports whether a selection's @skip or @include leaves it out.
func skipped(sel ast.Selection, vars map[string]any) bool {
	var dirs ast.DirectiveList
	switch sel := sel.(type) {
	case *ast.Field:
		dirs = sel.Directives
	case *ast.InlineFragment:
		dirs = sel.Directives
	case *ast.FragmentSpread:
		dirs = sel.Directives
	}
	cond := func(name string) (bool, bool) {
		d := dirs.ForName(name)
		if d == nil {
			return false, false
		}
		b, ok := d.ArgumentMap(vars)["if"].(bool)
		return b, ok
	}
	if v, ok := cond("skip"); ok && v {
		return true
	}
	if v, ok := cond("include"); ok && !v {
		return true
	}
	return false
}

// fieldCost is 1 for the field and, for a composite field, what it
// selects once per element it returns: sized elements when its parent's
// slicing argument sizes it (sized ≥ 0), else its own list size.
func fieldCost(f *ast.Field, vars map[string]any, sized int) int {
	if f.Definition == nil {
		return 1
	}
	weight := 1
	if d := f.Definition.Directives.ForName("cost"); d != nil {
		if a := d.Arguments.ForName("weight"); a != nil {
			if v, err := a.Value.Value(nil); err == nil {
				weight = max(intOf(v, 1), 1)
			}
		}
	}
	weight = add(weight, traversal(f, vars))
	if len(f.SelectionSet) == 0 {
		return weight
	}
	size, sizedFields := listSize(f, vars)
	if sized >= 0 {
		size = sized
	}
	if len(sizedFields) > 0 {
		sized := make(map[string]int, len(sizedFields))
		for _, name := range sizedFields {
			sized[name] = size
		}
		return add(weight, setCost(f.SelectionSet, vars, sized))
	}
	return add(weight, mul(size, setCost(f.SelectionSet, vars, nil)))
}

// traversal is what a field that walks the resource graph (@traverses)
// costs beyond its weight: perHop for each hop it may walk.
func traversal(f *ast.Field, vars map[string]any) int {
	d := f.Definition.Directives.ForName("traverses")
	if d == nil {
		return 0
	}
	perHop, hops := 0, 0
	if a := d.Arguments.ForName("perHop"); a != nil {
		if v, err := a.Value.Value(nil); err == nil {
			perHop = intOf(v, 0)
		}
	}
	if a := d.Arguments.ForName("hops"); a != nil {
		if v, err := a.Value.Value(nil); err == nil {
			hops = intOf(v, 0)
		}
	}
	if a := d.Arguments.ForName("hopsArgument"); a != nil {
		hops = argumentOrDefault(f, vars, a.Value.Raw, hops)
	}
	return mul(perHop, hops)
}

// argumentOrDefault is the value of f's argument name, or its default
// when the argument is absent or null, or def.
func argumentOrDefault(f *ast.Field, vars map[string]any, name string, def int) int {
	if v, ok := f.ArgumentMap(vars)[name]; ok && v != nil {
		return intOf(v, def)
	}
	if a := f.Definition.Arguments.ForName(name); a != nil && a.DefaultValue != nil {
		if v, err := a.DefaultValue.Value(nil); err == nil {
			return intOf(v, def)
		}
	}
	return def
}

// MaxEntityReferences bounds the federation references (_entities'
// representations) one operation resolves.
const MaxEntityReferences = 100

// ReasonEntitiesLimit names a request past MaxEntityReferences.
const ReasonEntitiesLimit = "ENTITIES_LIMIT"

// entityReferences counts the representations an operation's _entities
// fields ask to resolve.
func entityReferences(op *ast.OperationDefinition, vars map[string]any) int {
	if op == nil {
		return 0
	}
	n := 0
	for _, sel := range op.SelectionSet {
		if f, ok := sel.(*ast.Field); ok && f.Name == "_entities" {
			reps, _ := f.ArgumentMap(vars)["representations"].([]any)
			n += len(reps)
		}
	}
	return n
}

// listSize is how many elements a field returns and, when its slicing
// argument sizes some of its fields instead, which.
func listSize(f *ast.Field, vars map[string]any) (int, []string) {
	if f.Name == "_entities" { // one element per reference resolved
		reps, _ := f.ArgumentMap(vars)["representations"].([]any)
		return len(reps), nil
	}
	d := f.Definition.Directives.ForName("listSize")
	if d == nil {
		if f.Definition.Type.Elem != nil {
			return DefaultListSize, nil
		}
		return 1, nil
	}
	size := 1
	if f.Definition.Type.Elem != nil {
		size = DefaultListSize
	}
	if a := d.Arguments.ForName("assumedSize"); a != nil {
		if v, err := a.Value.Value(nil); err == nil {
			size = intOf(v, size)
		}
	}
	if a := d.Arguments.ForName("slicingArguments"); a != nil {
		for _, child := range a.Value.Children {
			// An explicit null (or a null variable) pages by the default.
			size = argumentOrDefault(f, vars, child.Value.Raw, size)
		}
	}
	var sizedFields []string
	if a := d.Arguments.ForName("sizedFields"); a != nil {
		for _, child := range a.Value.Children {
			sizedFields = append(sizedFields, child.Value.Raw)
		}
	}
	return max(size, 0), sizedFields
}

func intOf(v any, def int) int {
	switch v := v.(type) {
	case int:
		return min(max(v, 0), math.MaxInt32)
	case int64:
		return int(min(max(v, 0), math.MaxInt32))
	case float64:
		return int(min(max(v, 0), math.MaxInt32))
	case interface{ Int64() (int64, error) }: // json.Number
		if n, err := v.Int64(); err == nil {
			return int(min(max(n, 0), math.MaxInt32))
		}
	}
	return def
}

func add(a, b int) int { return min(a+b, math.MaxInt32) }

func mul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt32/b {
		return math.MaxInt32
	}
	return a * b
}
