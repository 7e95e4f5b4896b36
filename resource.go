package capstan

import (
	"slices"
	"strings"
	"time"
)

// Meta is carried by every stored entity.
type Meta struct {
	ID             string    `json:"id"`
	OrganizationID string    `json:"organization_id"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	// Version is the optimistic concurrency token: an update must carry the
	// version it read, and the store bumps it by one on every write.
	Version int64 `json:"version"`
}

// Resource is a managed thing (cluster/prod-k8s, node/worker-3). It holds the
// current state only; history lives in operations (invariant 1).
type Resource struct {
	Meta
	// Type is the resource type key (kubernetes.cluster).
	Type string `json:"type"`
	// Name is unique per organization and type; Key() joins them.
	Name                 string               `json:"name"`
	Environment          string               `json:"environment,omitempty"`
	DesiredState         map[string]any       `json:"desired_state,omitempty"`
	ObservedState        map[string]any       `json:"observed_state,omitempty"`
	LifecycleStatus      LifecycleStatus      `json:"lifecycle_status"`
	HealthStatus         HealthStatus         `json:"health_status"`
	ProvidedCapabilities []ProvidedCapability `json:"provided_capabilities,omitempty"`
	Relationships        []Relationship       `json:"relationships,omitempty"`
	// ActiveOperationID and LastOperationID point at operations; the resource
	// never embeds operation state (invariant 1).
	ActiveOperationID string `json:"active_operation_id,omitempty"`
	LastOperationID   string `json:"last_operation_id,omitempty"`
	// Assessment is the last health assessment of the resource on its
	// host (assessment.go): current state, like its health.
	Assessment *Assessment `json:"assessment,omitempty"`
	// AssessmentPaused, when set, stops its scheduled assessments.
	AssessmentPaused *AssessmentPause `json:"assessment_paused,omitempty"`
	// Source says where the resource came from (catalog:clusters, operation).
	Source string `json:"source,omitempty"`
}

// Key returns the domain key of a resource: its type's last segment, a slash
// and its name (cluster/prod-k8s is written kubernetes.cluster/prod-k8s).
func (r *Resource) Key() string { return ResourceKey(r.Type, r.Name) }

// ResourceKey joins a resource type and a name into a resource key.
func ResourceKey(typ, name string) string { return typ + "/" + name }

// SplitResourceKey splits a resource key into type and name.
func SplitResourceKey(key string) (typ, name string, ok bool) {
	i := strings.LastIndexByte(key, '/')
	if i <= 0 || i == len(key)-1 {
		return "", "", false
	}
	return key[:i], key[i+1:], true
}

// Provides returns the provided capability with key, or nil.
func (r *Resource) Provides(capability string) *ProvidedCapability {
	for i := range r.ProvidedCapabilities {
		if r.ProvidedCapabilities[i].Capability == capability {
			return &r.ProvidedCapabilities[i]
		}
	}
	return nil
}

// RelationshipType names an edge between resources.
type RelationshipType string

const (
	RelRunsOn     RelationshipType = "runs_on"
	RelDependsOn  RelationshipType = "depends_on"
	RelUses       RelationshipType = "uses"
	RelConnectsTo RelationshipType = "connects_to"
	RelPartOf     RelationshipType = "part_of"
)

// ValidRelationship reports whether t is a known relationship type.
func ValidRelationship(t RelationshipType) bool {
	switch t {
	case RelRunsOn, RelDependsOn, RelUses, RelConnectsTo, RelPartOf:
		return true
	}
	return false
}

// Relationship is a directed edge from the owning resource to Target
// (a resource key).
type Relationship struct {
	Type   RelationshipType `json:"type"`
	Target string           `json:"target"`
}

// ProvidedCapability says that a resource provides a capability within a
// scope (environment, region) with attributes (encryption, access_mode).
type ProvidedCapability struct {
	Capability string         `json:"capability"`
	Scope      map[string]any `json:"scope,omitempty"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// Lookup returns the value of a constraint key for this provided capability:
// scope first, then attributes.
func (p *ProvidedCapability) Lookup(key string) (any, bool) {
	if v, ok := p.Scope[key]; ok {
		return v, true
	}
	v, ok := p.Attributes[key]
	return v, ok
}

// Validate checks a resource's own fields (not whether its relationship
// targets exist: that is the store's business).
func (r *Resource) Validate() error {
	var p Problems
	if !ValidKey(r.Type) {
		p.Addf("type %q is not a valid key", r.Type)
	}
	if !ValidKey(r.Name) {
		p.Addf("name %q is not a valid key", r.Name)
	}
	if r.Environment != "" && !ValidKey(r.Environment) {
		p.Addf("environment %q is not a valid key", r.Environment)
	}
	if !LifecycleStatuses.Valid(r.LifecycleStatus) {
		p.Addf("unknown lifecycle status %q", r.LifecycleStatus)
	}
	if !ValidHealth(r.HealthStatus) {
		p.Addf("unknown health status %q", r.HealthStatus)
	}
	seen := map[string]bool{}
	for _, pc := range r.ProvidedCapabilities {
		if !ValidKey(pc.Capability) {
			p.Addf("provided capability %q is not a valid key", pc.Capability)
		}
		if seen[pc.Capability] {
			p.Addf("capability %s is provided twice", pc.Capability)
		}
		seen[pc.Capability] = true
	}
	for _, rel := range r.Relationships {
		if !ValidRelationship(rel.Type) {
			p.Addf("unknown relationship type %q", rel.Type)
		}
		if _, _, ok := SplitResourceKey(rel.Target); !ok {
			p.Addf("relationship target %q is not a resource key (type/name)", rel.Target)
		}
		if rel.Target == r.Key() {
			p.Addf("resource cannot have a relationship to itself")
		}
	}
	return p.Err("resource " + r.Key())
}

// MoveLifecycle moves the resource to status to, or returns an error naming
// the illegal transition.
func (r *Resource) MoveLifecycle(to LifecycleStatus) error {
	if err := LifecycleStatuses.Check(r.LifecycleStatus, to); err != nil {
		return err
	}
	r.LifecycleStatus = to
	return nil
}

// ResourceType is a class of resource and the actions allowed on it.
type ResourceType struct {
	Key                 string   `json:"key"`
	DisplayName         string   `json:"display_name"`
	AllowedActions      []string `json:"allowed_actions"`
	DefaultCapabilities []string `json:"default_capabilities,omitempty"`
	// Observe is how its resources are watched after their operations
	// (nil: they are not).
	Observe *ObserveSpec `json:"observe,omitempty"`
	// Pack is the id@version of the pack that brought this type.
	Pack string `json:"pack,omitempty"`
}

// Validate checks the resource type.
func (t *ResourceType) Validate() error {
	var p Problems
	if !ValidKey(t.Key) {
		p.Addf("key %q is not a valid key", t.Key)
	}
	if len(t.AllowedActions) == 0 {
		p.Addf("allowed_actions is empty")
	}
	for _, a := range t.AllowedActions {
		if !ValidKey(a) {
			p.Addf("action %q is not a valid key", a)
		}
	}
	if t.Observe != nil {
		t.Observe.Validate(t.Key, &p)
	}
	return p.Err("resource type " + t.Key)
}

// Value returns what the resource says about key: its name and environment,
// then any provided capability's scope and attributes (by capability order).
func (r *Resource) Value(key string) (any, bool) {
	switch key {
	case "name":
		return r.Name, true
	case "environment":
		if r.Environment != "" {
			return r.Environment, true
		}
	}
	for i := range r.ProvidedCapabilities {
		if v, ok := r.ProvidedCapabilities[i].Lookup(key); ok {
			return v, true
		}
	}
	return nil, false
}

// CandidateFacts is what constraint matching looks at for one candidate:
// the providing resource's name, environment and lifecycle, and the
// provided capability's scope and attributes.
type CandidateFacts struct {
	Name        string
	Environment string
	Lifecycle   LifecycleStatus
	Provided    *ProvidedCapability
	// values flattens Provided's scope over its attributes, sorted by key:
	// a short slice scans faster than two map lookups.
	values []factValue
}

type factValue struct {
	key   string
	value any
}

// Facts returns the matching facts of r providing pc.
func (r *Resource) Facts(pc *ProvidedCapability) CandidateFacts {
	f := CandidateFacts{Name: r.Name, Environment: r.Environment, Lifecycle: r.LifecycleStatus, Provided: pc}
	for k, v := range pc.Attributes {
		if _, scoped := pc.Scope[k]; !scoped {
			f.values = append(f.values, factValue{k, v})
		}
	}
	for k, v := range pc.Scope {
		f.values = append(f.values, factValue{k, v})
	}
	slices.SortFunc(f.values, func(a, b factValue) int { return strings.Compare(a.key, b.key) })
	return f
}

func (f *CandidateFacts) lookup(k string) (any, bool) {
	for i := range f.values {
		if f.values[i].key == k {
			return f.values[i].value, true
		}
	}
	return nil, false
}

// CandidateFailures appends to dst the keys of the checks CheckCandidate
// would fail (lifecycle first, then constraint keys in order) without
// building the explanations: the fast path for judging many candidates.
// Callers judging many candidates share one dst and keep sub-slices.
func CandidateFailures(dst []string, f *CandidateFacts, accept Lifecycles, want map[string]any, wantKeys []string, specs func(string) (ConstraintSpec, bool)) []string {
	if !accept.Accepts(f.Lifecycle) {
		dst = append(dst, "lifecycle")
	}
	for _, k := range wantKeys {
		spec, _ := specs(k)
		got, ok := f.Value(k)
		if !ok || !constraintHolds(spec, want[k], got) {
			dst = append(dst, k)
		}
	}
	return dst
}

// Value returns what a candidate declares for constraint key k.
func (f *CandidateFacts) Value(k string) (any, bool) {
	switch k {
	case "name":
		return f.Name, true
	case "environment":
		if v, ok := f.lookup(k); ok {
			return v, true
		}
		if f.Environment != "" {
			return f.Environment, true
		}
		return nil, false
	}
	return f.lookup(k)
}

// SortedKeys returns a map's keys in order.
func SortedKeys[V any](m map[string]V) []string { return sortedKeys(m) }

// CheckCandidate checks every wanted constraint against a candidate's
// facts, plus the lifecycle (only active providers serve, unless the
// requirement accepts others: a repair binds the degraded resource it
// repairs). The specs give match modes; a key with no spec matches exactly.
func CheckCandidate(f *CandidateFacts, accept Lifecycles, want map[string]any, specs func(string) (ConstraintSpec, bool)) []ConstraintCheck {
	return CheckCandidateKeys(f, accept, sortedKeys(want), want, specs)
}

// lifecycleWant is the default lifecycle check's wanted value, boxed once.
var lifecycleWant any = string(LifecycleActive)

// CheckCandidateKeys is CheckCandidate for a search that checks many
// candidates against one want: keys are want's keys, sorted once.
func CheckCandidateKeys(f *CandidateFacts, accept Lifecycles, keys []string, want map[string]any, specs func(string) (ConstraintSpec, bool)) []ConstraintCheck {
	checks := make([]ConstraintCheck, 0, len(keys)+1)
	wanted, text := lifecycleWant, string(LifecycleActive)
	if len(accept) > 0 {
		wanted, text = accept.Strings(), accept.String()
	}
	checks = append(checks, ConstraintCheck{
		Key: "lifecycle", Want: wanted, Got: string(f.Lifecycle),
		Passed: accept.Accepts(f.Lifecycle),
		Reason: "lifecycle: want " + text + ", got " + string(f.Lifecycle),
	})
	for _, k := range keys {
		spec, _ := specs(k)
		got, ok := f.Value(k)
		checks = append(checks, CheckConstraint(k, spec, want[k], got, ok))
	}
	return checks
}

// Touch stamps meta for a write at now: a new entity gets an id (unless it
// has one), its creation time and version 1; every write bumps the version.
// Stores call it so that both give the same metadata.
func (m *Meta) Touch(org string, created bool, now time.Time) {
	now = now.UTC()
	if created {
		if m.ID == "" {
			m.ID = NewID()
		}
		m.CreatedAt = now
		m.Version = 0
	}
	m.OrganizationID = org
	m.UpdatedAt = now
	m.Version++
}

// Lifecycles are the lifecycle statuses a requirement accepts of its
// provider; none means active only (what serves). A repair accepts the
// degraded or failed resource it is for.
type Lifecycles []LifecycleStatus

// Accepts reports whether a provider in status s qualifies.
func (l Lifecycles) Accepts(s LifecycleStatus) bool {
	if len(l) == 0 {
		return s == LifecycleActive
	}
	return slices.Contains(l, s)
}

// Strings returns the statuses as strings (for stores and explanations).
func (l Lifecycles) Strings() []string {
	if len(l) == 0 {
		return []string{string(LifecycleActive)}
	}
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = string(s)
	}
	return out
}

// String is "active", or "one of degraded, failed".
func (l Lifecycles) String() string {
	if len(l) <= 1 {
		return l.Strings()[0]
	}
	return "one of " + strings.Join(l.Strings(), ", ")
}

// ResourceMatches reports whether r's key or name contains search,
// ignoring case: the explorer's resource search, on every store alike.
func ResourceMatches(r *Resource, search string) bool {
	s := strings.ToLower(search)
	return strings.Contains(strings.ToLower(r.Key()), s) || strings.Contains(strings.ToLower(r.Name), s)
}
