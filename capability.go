package capstan

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// CapabilityDefinition gives a capability key its meaning: which constraints
// exist, their types, which are required in production, and which other
// capabilities it implies (kubernetes.cluster implies workload.runtime).
type CapabilityDefinition struct {
	Key              string                    `json:"key"`
	Category         string                    `json:"category"`
	Description      string                    `json:"description,omitempty"`
	ConstraintSchema map[string]ConstraintSpec `json:"constraint_schema,omitempty"`
	Implies          []string                  `json:"implies,omitempty"`
	// Pack is the id@version of the pack that brought this definition.
	Pack string `json:"pack,omitempty"`
}

// Constraint value types.
const (
	ConstraintString  = "string"
	ConstraintInteger = "integer"
	ConstraintNumber  = "number"
	ConstraintBoolean = "boolean"
)

// Constraint match modes.
const (
	MatchExact   = "exact"
	MatchMinimum = "minimum"
	MatchMaximum = "maximum"
)

// ConstraintSpec describes one constraint of a capability.
type ConstraintSpec struct {
	Type           string `json:"type"`
	Enum           []any  `json:"enum,omitempty"`
	Match          string `json:"match,omitempty"`
	RequiredInProd bool   `json:"required_in_prod,omitempty"`
	Description    string `json:"description,omitempty"`
	// Sensitive marks an attribute whose value is a credential: a catalog
	// gives it as a secret:<name> reference, never the value.
	Sensitive bool `json:"sensitive,omitempty"`
}

// BuiltinConstraints are constraint keys every capability understands: the
// provider resource's name and environment.
var BuiltinConstraints = map[string]ConstraintSpec{
	"name":        {Type: ConstraintString, Match: MatchExact, Description: "name of the providing resource"},
	"environment": {Type: ConstraintString, Match: MatchExact, Description: "environment of the provided capability"},
}

// Spec returns the constraint spec for key, including built-in constraints.
func (c *CapabilityDefinition) Spec(key string) (ConstraintSpec, bool) {
	if s, ok := c.ConstraintSchema[key]; ok {
		return s, true
	}
	s, ok := BuiltinConstraints[key]
	return s, ok
}

// Validate checks the definition on its own.
func (c *CapabilityDefinition) Validate() error {
	var p Problems
	if !ValidKey(c.Key) {
		p.Addf("key %q is not a valid key", c.Key)
	}
	if c.Category == "" {
		p.Addf("category is empty")
	}
	for k, s := range c.ConstraintSchema {
		switch s.Type {
		case ConstraintString, ConstraintInteger, ConstraintNumber, ConstraintBoolean:
		default:
			p.Addf("constraint %s has unknown type %q", k, s.Type)
		}
		switch s.Match {
		case "", MatchExact:
		case MatchMinimum, MatchMaximum:
			if s.Type != ConstraintInteger && s.Type != ConstraintNumber {
				p.Addf("constraint %s: match %s needs a numeric type", k, s.Match)
			}
		default:
			p.Addf("constraint %s has unknown match %q", k, s.Match)
		}
		for _, e := range s.Enum {
			if !valueHasType(e, s.Type) {
				p.Addf("constraint %s: enum value %v is not of type %s", k, e, s.Type)
			}
		}
	}
	for _, i := range c.Implies {
		if i == c.Key {
			p.Addf("capability implies itself")
		}
	}
	return p.Err("capability " + c.Key)
}

// CheckValue returns a problem text when v does not fit spec, or "".
func (s ConstraintSpec) CheckValue(v any) string {
	if list, ok := v.([]any); ok {
		for _, item := range list {
			if msg := s.CheckValue(item); msg != "" {
				return msg
			}
		}
		return ""
	}
	if !valueHasType(v, s.Type) {
		return fmt.Sprintf("value %v is not of type %s", v, s.Type)
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return equalValues(e, v) }) {
		return fmt.Sprintf("value %v is not one of %v", v, s.Enum)
	}
	return ""
}

func valueHasType(v any, typ string) bool {
	switch typ {
	case ConstraintString:
		_, ok := v.(string)
		return ok
	case ConstraintBoolean:
		_, ok := v.(bool)
		return ok
	case ConstraintInteger:
		f, ok := toFloat(v)
		return ok && f == float64(int64(f))
	case ConstraintNumber:
		_, ok := toFloat(v)
		return ok
	}
	return false
}

// Number returns v as a float64 when it is a number of any Go kind.
func Number(v any) (float64, bool) { return toFloat(v) }

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// text formats a value as %v does, without fmt for the common kinds.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}

func equalValues(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	fa, oka := toFloat(a)
	fb, okb := toFloat(b)
	if oka && okb {
		return fa == fb
	}
	return fmt.Sprint(a) == fmt.Sprint(b) && fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b)
}

// ConstraintCheck is the verdict on one constraint for one candidate provider.
type ConstraintCheck struct {
	Key    string `json:"key"`
	Want   any    `json:"want"`
	Got    any    `json:"got,omitempty"`
	Passed bool   `json:"passed"`
	Reason string `json:"reason"`
}

// constraintHolds is the verdict of CheckConstraint for a present value.
func constraintHolds(spec ConstraintSpec, want, got any) bool {
	if list, ok := want.([]any); ok {
		return slices.ContainsFunc(list, func(w any) bool { return equalValues(w, got) })
	}
	switch spec.Match {
	case MatchMinimum, MatchMaximum:
		w, okw := toFloat(want)
		g, okg := toFloat(got)
		if !okw || !okg {
			return false
		}
		if spec.Match == MatchMinimum {
			return g >= w
		}
		return g <= w
	}
	return equalValues(want, got)
}

// CheckConstraint compares a wanted (resolved) constraint value with what a
// provider declares. It is the one definition of constraint matching; the
// Neo4j store's Cypher mirrors it and the conformance suite holds both to it.
func CheckConstraint(key string, spec ConstraintSpec, want, got any, present bool) ConstraintCheck {
	c := ConstraintCheck{Key: key, Want: want, Got: got}
	if !present {
		c.Reason = fmt.Sprintf("%s: provider does not declare it (want %v)", key, want)
		return c
	}
	c.Passed = constraintHolds(spec, want, got)
	verb := "want "
	switch {
	case isList(want):
		verb = "want one of "
	case spec.Match == MatchMinimum:
		verb = "want at least "
	case spec.Match == MatchMaximum:
		verb = "want at most "
	}
	c.Reason = key + ": " + verb + text(want) + ", got " + text(got)
	return c
}

// Strategy says how a requirement may be met.
type Strategy string

const (
	StrategyExisting         Strategy = "existing"
	StrategyExistingOrCreate Strategy = "existing-or-create"
	StrategyCreate           Strategy = "create"
	StrategyExplicit         Strategy = "explicit"
)

// ValidStrategy reports whether s is a known strategy.
func ValidStrategy(s Strategy) bool {
	switch s {
	case StrategyExisting, StrategyExistingOrCreate, StrategyCreate, StrategyExplicit:
		return true
	}
	return false
}

// Constraint references a requirement may use instead of a literal value.
const (
	// RefSameAsWorkload resolves to the value of the same key found on the
	// workload's provider or, through runs_on, on what it runs on.
	RefSameAsWorkload = "same-as-workload"
	// refIntentPrefix starts a reference to an intent field: ${intent.environment}.
	refIntentPrefix = "${intent."
)

// IntentRef returns the intent constraint name when v is ${intent.NAME}.
func IntentRef(v any) (string, bool) {
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, refIntentPrefix) || !strings.HasSuffix(s, "}") {
		return "", false
	}
	return s[len(refIntentPrefix) : len(s)-1], true
}

// CapabilityRequirement says that a scenario (or a node) needs a capability.
// It never names a provider unless the user gave one (invariant 6).
type CapabilityRequirement struct {
	ID          string         `json:"id"`
	Capability  string         `json:"capability"`
	Scope       string         `json:"scope,omitempty"`
	Description string         `json:"description,omitempty"`
	Constraints map[string]any `json:"constraints,omitempty"`
	Strategy    Strategy       `json:"strategy"`
	// Workload marks the requirement whose provider hosts the workload;
	// same-as-workload references resolve from it.
	Workload bool `json:"workload,omitempty"`
	// Provider is a resource key the user chose explicitly. Only valid with
	// strategy explicit and never in a scenario template.
	Provider string `json:"provider,omitempty"`
	// Lifecycles are the provider lifecycle statuses the requirement
	// accepts; none means active only. A repair scenario's requirement on
	// what it repairs accepts degraded and failed too.
	Lifecycles Lifecycles `json:"lifecycles,omitempty"`
	// CreateWith names the scenario that creates the provider when none
	// exists (strategy create or existing-or-create): a scenario id (its
	// newest version) or a ref (id@version). Unset, any installed
	// scenario that provides the capability may.
	CreateWith string `json:"create_with,omitempty"`
}

// Validate checks the requirement against its capability definition (nil
// when the capability is unknown) and invariant 6. It does not check prod
// completeness; see MissingInProd.
func (r *CapabilityRequirement) Validate(def *CapabilityDefinition) error {
	var p Problems
	if !ValidKey(r.ID) {
		p.Addf("id %q is not a valid key", r.ID)
	}
	if !ValidStrategy(r.Strategy) {
		p.Addf("unknown strategy %q", r.Strategy)
	}
	for _, s := range r.Lifecycles {
		if !LifecycleStatuses.Valid(s) {
			p.Addf("unknown lifecycle status %q", s)
		}
	}
	if r.Provider != "" && r.Strategy != StrategyExplicit {
		p.Addf("names provider %s but strategy is %s: only an explicit user choice may name a provider (invariant 6)", r.Provider, r.Strategy)
	}
	if r.CreateWith != "" && r.Strategy != StrategyCreate && r.Strategy != StrategyExistingOrCreate {
		p.Addf("names create_with %s but strategy %s never creates a provider", r.CreateWith, r.Strategy)
	}
	if id, v := SplitRef(r.CreateWith); r.CreateWith != "" && (!ValidKey(id) || strings.Contains(r.CreateWith, "@") && !ValidSemver(v)) {
		p.Addf("create_with %q is not a scenario id or ref", r.CreateWith)
	}
	if def == nil {
		p.Addf("unknown capability %q", r.Capability)
		return p.Err("requirement " + r.ID)
	}
	for _, k := range sortedKeys(r.Constraints) {
		spec, ok := def.Spec(k)
		if !ok {
			p.Addf("constraint %s is not defined by capability %s", k, def.Key)
			continue
		}
		v := r.Constraints[k]
		if _, ref := IntentRef(v); ref || v == RefSameAsWorkload {
			continue
		}
		if msg := spec.CheckValue(v); msg != "" {
			p.Addf("constraint %s: %s", k, msg)
		}
	}
	return p.Err("requirement " + r.ID)
}

// MissingInProd lists the constraints def marks required in production that
// the requirement does not set (invariant 12).
func (r *CapabilityRequirement) MissingInProd(def *CapabilityDefinition) []string {
	var missing []string
	for _, k := range sortedKeys(def.ConstraintSchema) {
		if def.ConstraintSchema[k].RequiredInProd {
			if _, ok := r.Constraints[k]; !ok {
				missing = append(missing, k)
			}
		}
	}
	return missing
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ImpliedSource is a capability that provides a wanted one, directly (Via
// empty) or through a chain of implications (Via lists the chain).
type ImpliedSource struct {
	Capability string
	Via        []string
}

// ImplyingCapabilities returns want itself and every capability that implies
// it within depth hops, nearest first, each with its implication path.
func ImplyingCapabilities(defs map[string]*CapabilityDefinition, want string, depth int) []ImpliedSource {
	impliedBy := map[string][]string{}
	for _, k := range sortedKeys(defs) {
		for _, i := range defs[k].Implies {
			impliedBy[i] = append(impliedBy[i], k)
		}
	}
	out := []ImpliedSource{{Capability: want}}
	seen := map[string]bool{want: true}
	for i := 0; i < len(out); i++ {
		cur := out[i]
		if len(cur.Via) >= depth {
			continue
		}
		for _, src := range impliedBy[cur.Capability] {
			if seen[src] {
				continue
			}
			seen[src] = true
			via := append([]string{src}, cur.Via...)
			if len(cur.Via) == 0 {
				via = []string{src, want}
			}
			out = append(out, ImpliedSource{Capability: src, Via: via})
		}
	}
	return out
}

// SSHAccess is the capability a compute node provides to be reached over
// SSH: its attributes are the address, port, user, pinned host keys and
// the secret references of its credentials (catalog, sshaccess).
const SSHAccess = "ssh.access"

// KubernetesCluster is the capability a cluster provides: where it is
// reached, its api_server (https URL), ca (its certificate authority,
// PEM, pinned: never skipped) and credentials (a secret: reference to
// the bearer token of the identity Capstan acts as), are attributes of
// it (executor/kube).
const KubernetesCluster = "kubernetes.cluster"

// ObjectStorageS3 is the capability of an S3 object store; one whose
// attributes hold an endpoint and its keys (s3access) is one the s3
// runner and probe reach.
const ObjectStorageS3 = "object_storage.s3"
