package server

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
)

// selectionKey says which subscriptions encode a streamed value to the
// same bytes: two subscriptions with equal keys get equal results for
// equal values (live.Shared), so one encoding serves both. The key is the
// root field — its alias, directives and selections, and the fragments
// they spread — as text, and the values of the variables those use. The
// root field's arguments are left out: they choose the stream (which
// operation, from which cursor), not how a value of it is encoded, so
// dashboards following one operation from different cursors share.
//
// The key is "" (nothing shared) unless the operation's root is exactly
// one field. It assumes what it is used for: values whose fields do not
// depend on who asks (an operation's timeline events, which every
// subscriber allowed to follow the operation sees whole).
func selectionKey(oc *graphql.OperationContext) string {
	if oc == nil || oc.Operation == nil || len(oc.Operation.SelectionSet) != 1 {
		return ""
	}
	root, ok := oc.Operation.SelectionSet[0].(*ast.Field)
	if !ok {
		return ""
	}
	field := *root
	field.Arguments = nil
	var b strings.Builder
	formatter.NewFormatter(&b, formatter.WithCompacted()).FormatQueryDocument(&ast.QueryDocument{
		Operations: ast.OperationList{{Operation: ast.Subscription, SelectionSet: ast.SelectionSet{&field}}},
		Fragments:  usedFragments(field.SelectionSet, nil),
	})
	names := map[string]bool{}
	variablesOfDirectives(field.Directives, names)
	variablesOfSelections(field.SelectionSet, names, map[string]bool{})
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	for _, n := range sorted {
		v, _ := json.Marshal(oc.Variables[n]) // coerced input values: always encodable
		b.WriteString("\n$" + n + "=")
		b.Write(v)
	}
	return b.String()
}

// usedFragments appends the fragments a selection set spreads, directly
// or through other fragments, each once.
func usedFragments(set ast.SelectionSet, list ast.FragmentDefinitionList) ast.FragmentDefinitionList {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			list = usedFragments(s.SelectionSet, list)
		case *ast.InlineFragment:
			list = usedFragments(s.SelectionSet, list)
		case *ast.FragmentSpread:
			if s.Definition == nil || list.ForName(s.Name) != nil {
				continue
			}
			list = append(list, s.Definition)
			list = usedFragments(s.Definition.SelectionSet, list)
		}
	}
	return list
}

// variablesOfSelections adds the variables a selection set uses (field
// arguments, directives, the fragments it spreads) to names.
func variablesOfSelections(set ast.SelectionSet, names, seenFragments map[string]bool) {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			for _, a := range s.Arguments {
				variablesOfValue(a.Value, names)
			}
			variablesOfDirectives(s.Directives, names)
			variablesOfSelections(s.SelectionSet, names, seenFragments)
		case *ast.InlineFragment:
			variablesOfDirectives(s.Directives, names)
			variablesOfSelections(s.SelectionSet, names, seenFragments)
		case *ast.FragmentSpread:
			variablesOfDirectives(s.Directives, names)
			if s.Definition != nil && !seenFragments[s.Name] {
				seenFragments[s.Name] = true
				variablesOfDirectives(s.Definition.Directives, names)
				variablesOfSelections(s.Definition.SelectionSet, names, seenFragments)
			}
		}
	}
}

func variablesOfDirectives(list ast.DirectiveList, names map[string]bool) {
	for _, d := range list {
		for _, a := range d.Arguments {
			variablesOfValue(a.Value, names)
		}
	}
}

func variablesOfValue(v *ast.Value, names map[string]bool) {
	if v == nil {
		return
	}
	if v.Kind == ast.Variable {
		names[v.Raw] = true
	}
	for _, c := range v.Children {
		variablesOfValue(c.Value, names)
	}
}
