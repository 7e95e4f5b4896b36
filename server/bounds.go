package server

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// Limits bound one GraphQL request. The shape limits are checked on the
// parsed document before validation (whose overlap check is quadratic in
// the fields of a selection set), the cost after it, the response size
// after execution.
type Limits struct {
	// MaxQueryBytes bounds the query document.
	MaxQueryBytes int
	// MaxTokens bounds the parser's work (Apollo Router's default: 15,000).
	MaxTokens int
	// MaxDepth bounds how deep selections nest, fragments expanded.
	MaxDepth int
	// MaxAliases bounds the aliased fields, fragments expanded.
	MaxAliases int
	// MaxRootFields bounds the fields of an operation's top selection.
	MaxRootFields int
	// MaxFields bounds the fields of an operation, fragments expanded.
	MaxFields int
	// MaxRepeats bounds how often one response key appears in one
	// selection set (fragments at that level included).
	MaxRepeats int
	// MaxTypenameRepeats is MaxRepeats for __typename: Apollo Client adds
	// it to every selection set and inline fragment, so a selection that
	// spreads every type of an interface (the twelve OperationEvent
	// types) repeats it once per type. It has no arguments and no
	// selection, so each pair the overlap check compares is cheap.
	MaxTypenameRepeats int
	// MaxCost bounds an operation's cost, lists multiplied by their sizes
	// (see cost.go).
	MaxCost int
	// MaxResponseBytes bounds the data of one response (or one
	// subscription event).
	MaxResponseBytes int
	// MaxResolverCalls bounds the resolvers (fields computed or loaded,
	// not plain struct fields) one query or mutation runs: the backstop
	// when the cost's list sizes underestimate the data (a resource with
	// thousands of relationships). Past it, each further resolver answers
	// an error and resolves nothing under it.
	MaxResolverCalls int64
	// PersistedQueries and PersistedBytes bound the documents automatic
	// persisted queries keep (persisted.go): past either, the least
	// recently used go first.
	PersistedQueries, PersistedBytes int
}

// DefaultLimits are the limits of `capstan serve`. The heaviest request
// they admit is found and measured by BenchmarkHeaviestAdmittedRequest.
var DefaultLimits = Limits{
	MaxQueryBytes:      64 << 10,
	MaxTokens:          15000,
	MaxDepth:           15,
	MaxAliases:         30,
	MaxRootFields:      20,
	MaxFields:          1000,
	MaxRepeats:         10,
	MaxTypenameRepeats: 64,
	MaxCost:            50000,
	MaxResponseBytes:   8 << 20,
	MaxResolverCalls:   100000,
	PersistedQueries:   10_000,
	PersistedBytes:     16 << 20,
}

// Reasons (extensions.reason) of requests refused by a limit; their code
// is INVALID.
const (
	ReasonQueryTooLarge    = "QUERY_TOO_LARGE"
	ReasonTokenLimit       = "TOKEN_LIMIT"
	ReasonDepthLimit       = "DEPTH_LIMIT"
	ReasonAliasLimit       = "ALIAS_LIMIT"
	ReasonRootFieldLimit   = "ROOT_FIELD_LIMIT"
	ReasonFieldLimit       = "FIELD_LIMIT"
	ReasonRepeatLimit      = "FIELD_REPEAT_LIMIT"
	ReasonCostLimit        = "COST_LIMIT"
	ReasonResponseTooLarge = "RESPONSE_TOO_LARGE"
	ReasonResolverLimit    = "RESOLVER_LIMIT"
	// ReasonIntrospectionOff: __schema or __type without introspection on.
	ReasonIntrospectionOff = "INTROSPECTION_DISABLED"
)

// shapeLimit is the gqlgen extension that parses a request's document
// with the token limit and checks its shape before gqlgen validates it.
// Accepted documents are remembered (by digest), as gqlgen caches them.
type shapeLimit struct {
	limits        Limits
	introspection bool
	accepted      *lru.LRU[struct{}]
}

var (
	_ graphql.HandlerExtension          = (*shapeLimit)(nil)
	_ graphql.OperationParameterMutator = (*shapeLimit)(nil)
)

func newShapeLimit(l Limits, introspection bool) *shapeLimit {
	return &shapeLimit{limits: l, introspection: introspection, accepted: lru.New[struct{}](1000)}
}

func (s *shapeLimit) ExtensionName() string                   { return "ShapeLimit" }
func (s *shapeLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (s *shapeLimit) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if len(p.Query) > s.limits.MaxQueryBytes {
		return limitError(ReasonQueryTooLarge, "the query document has %d bytes; the limit is %d", len(p.Query), s.limits.MaxQueryBytes)
	}
	sum := sha256.Sum256([]byte(p.Query))
	key := string(sum[:])
	if _, ok := s.accepted.Get(ctx, key); ok {
		return nil
	}
	if err := checkShape(p.Query, s.limits, s.introspection); err != nil {
		return err
	}
	s.accepted.Add(ctx, key, struct{}{})
	return nil
}

// CheckShape parses query with the token limit and checks every bound of
// its shape. A document that does not parse is left to gqlgen's parser
// (it fails the same way) unless the token limit stopped it.
func CheckShape(query string, l Limits) *gqlerror.Error { return checkShape(query, l, true) }

func checkShape(query string, l Limits, introspection bool) *gqlerror.Error {
	if len(query) > l.MaxQueryBytes {
		return limitError(ReasonQueryTooLarge, "the query document has %d bytes; the limit is %d", len(query), l.MaxQueryBytes)
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, l.MaxTokens)
	if err != nil {
		if strings.Contains(err.Error(), "token limit") {
			return limitError(ReasonTokenLimit, "the query document has more than %d tokens", l.MaxTokens)
		}
		return nil
	}
	s := newShape(doc, l)
	if !introspection && s.introspects() {
		return limitError(ReasonIntrospectionOff, "introspection is disabled on this server")
	}
	return s.check()
}

func limitError(reason, format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	errcode.Set(err, reason)
	return err
}

// shape measures a document. Counts saturate just above their limit, so
// fragments that spread each other many times cannot overflow them.
type shape struct {
	doc       *ast.QueryDocument
	l         Limits
	fragments map[string]*ast.FragmentDefinition
	measured  map[string]measure
	keys      map[string]map[string]int
	visiting  map[string]bool
}

// measure is what a selection set costs, fragments expanded.
type measure struct{ fields, aliases, depth int }

func newShape(doc *ast.QueryDocument, l Limits) *shape {
	s := &shape{doc: doc, l: l, fragments: map[string]*ast.FragmentDefinition{}, measured: map[string]measure{},
		keys: map[string]map[string]int{}, visiting: map[string]bool{}}
	for _, f := range doc.Fragments {
		if _, dup := s.fragments[f.Name]; !dup {
			s.fragments[f.Name] = f
		}
	}
	return s
}

func (s *shape) check() *gqlerror.Error {
	// Repeats are checked in every selection set the document writes,
	// fragments and unused ones included: validation visits them all.
	for _, f := range s.doc.Fragments {
		if err := s.checkRepeats(f.SelectionSet); err != nil {
			return err
		}
	}
	for _, op := range s.doc.Operations {
		if err := s.checkRepeats(op.SelectionSet); err != nil {
			return err
		}
		if total(s.flatKeys(op.SelectionSet)) > s.l.MaxRootFields {
			return limitError(ReasonRootFieldLimit, "operation %s has more than %d root fields", opName(op), s.l.MaxRootFields)
		}
		m := s.measureSet(op.SelectionSet)
		switch {
		case m.depth > s.l.MaxDepth:
			return limitError(ReasonDepthLimit, "operation %s nests more than %d levels deep", opName(op), s.l.MaxDepth)
		case m.fields > s.l.MaxFields:
			return limitError(ReasonFieldLimit, "operation %s selects more than %d fields (fragments expanded)", opName(op), s.l.MaxFields)
		case m.aliases > s.l.MaxAliases:
			return limitError(ReasonAliasLimit, "operation %s has more than %d aliases (fragments expanded)", opName(op), s.l.MaxAliases)
		}
	}
	return nil
}

// introspects reports whether the document selects __schema or __type
// anywhere (__typename is not introspection).
func (s *shape) introspects() bool {
	var in func(ast.SelectionSet) bool
	in = func(set ast.SelectionSet) bool {
		for _, sel := range set {
			switch sel := sel.(type) {
			case *ast.Field:
				if sel.Name == "__schema" || sel.Name == "__type" || in(sel.SelectionSet) {
					return true
				}
			case *ast.InlineFragment:
				if in(sel.SelectionSet) {
					return true
				}
			}
		}
		return false
	}
	for _, op := range s.doc.Operations {
		if in(op.SelectionSet) {
			return true
		}
	}
	for _, f := range s.doc.Fragments {
		if in(f.SelectionSet) {
			return true
		}
	}
	return false
}

func opName(op *ast.OperationDefinition) string {
	if op.Name == "" {
		return "(anonymous)"
	}
	return fmt.Sprintf("%q", op.Name)
}

// measureSet measures a selection set, fragments expanded (each
// fragment measured once). A spread of a fragment being measured (a
// cycle, which validation refuses) counts nothing.
func (s *shape) measureSet(set ast.SelectionSet) measure {
	var m measure
	for _, sel := range set {
		var inner measure
		switch sel := sel.(type) {
		case *ast.Field:
			sub := s.measureSet(sel.SelectionSet)
			inner = measure{fields: 1 + sub.fields, aliases: sub.aliases, depth: 1 + sub.depth}
			if sel.Alias != "" && sel.Alias != sel.Name {
				inner.aliases++
			}
		case *ast.InlineFragment:
			inner = s.measureSet(sel.SelectionSet)
		case *ast.FragmentSpread:
			inner = s.measureFragment(sel.Name)
		}
		m.fields = s.saturate(m.fields+inner.fields, s.l.MaxFields)
		m.aliases = s.saturate(m.aliases+inner.aliases, s.l.MaxAliases)
		m.depth = max(m.depth, min(inner.depth, s.l.MaxDepth+1))
	}
	return m
}

func (s *shape) measureFragment(name string) measure {
	if m, ok := s.measured[name]; ok {
		return m
	}
	f := s.fragments[name]
	if f == nil || s.visiting[name] {
		return measure{}
	}
	s.visiting[name] = true
	m := s.measureSet(f.SelectionSet)
	delete(s.visiting, name)
	s.measured[name] = m
	return m
}

func (s *shape) saturate(n, limit int) int { return min(n, limit+1) }

// saturation is where repeat counts stop growing: past every repeat limit.
func (s *shape) saturation() int { return max(s.l.MaxRepeats, s.l.MaxTypenameRepeats) }

// flatKeys counts the response keys of one selection set, the fields of
// its inline fragments and spread fragments included.
func (s *shape) flatKeys(set ast.SelectionSet) map[string]int {
	keys := map[string]int{}
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if sel.Name == "__typename" && (sel.Alias == "" || sel.Alias == sel.Name) {
				keys[typenameKey]++
			} else {
				keys[responseKey(sel)]++
			}
		case *ast.InlineFragment:
			addKeys(keys, s.flatKeys(sel.SelectionSet), s.saturation())
		case *ast.FragmentSpread:
			addKeys(keys, s.fragmentKeys(sel.Name), s.saturation())
		}
	}
	return keys
}

func (s *shape) fragmentKeys(name string) map[string]int {
	if k, ok := s.keys[name]; ok {
		return k
	}
	f := s.fragments[name]
	if f == nil || s.visiting[name] {
		return nil
	}
	s.visiting[name] = true
	k := s.flatKeys(f.SelectionSet)
	delete(s.visiting, name)
	s.keys[name] = k
	return k
}

func addKeys(to, from map[string]int, limit int) {
	for k, n := range from {
		to[k] = min(to[k]+n, limit+1)
	}
}

func total(keys map[string]int) int {
	n := 0
	for _, c := range keys {
		n += c
	}
	return n
}

func responseKey(f *ast.Field) string {
	if f.Alias != "" {
		return f.Alias
	}
	return f.Name
}

// typenameKey is the response key flatKeys counts a plain __typename
// under (no alias): an alias named "__typename" on another field counts
// under its alias, at MaxRepeats like any other.
const typenameKey = "\x00__typename"

// repeatLimit is how often key may appear in one selection set.
func (s *shape) repeatLimit(key string) int {
	if key == typenameKey {
		return max(s.l.MaxRepeats, s.l.MaxTypenameRepeats)
	}
	return s.l.MaxRepeats
}

// checkRepeats refuses a selection set (or one nested in it) where one
// response key appears more than MaxRepeats times.
func (s *shape) checkRepeats(set ast.SelectionSet) *gqlerror.Error {
	keys := s.flatKeys(set)
	for _, key := range slices.Sorted(maps.Keys(keys)) { // the same key named every time
		if limit := s.repeatLimit(key); keys[key] > limit {
			return limitError(ReasonRepeatLimit, "field %q is selected more than %d times in one selection set", strings.TrimPrefix(key, "\x00"), limit)
		}
	}
	for _, sel := range set {
		var inner ast.SelectionSet
		switch sel := sel.(type) {
		case *ast.Field:
			inner = sel.SelectionSet
		case *ast.InlineFragment:
			inner = sel.SelectionSet
		}
		if err := s.checkRepeats(inner); err != nil {
			return err
		}
	}
	return nil
}
