package capstan

import (
	"context"
	"slices"
)

// Store is everything Capstan persists. Every method is scoped to one
// organization: nothing of another organization is ever read or written.
// Every update carries the version it read; a stale version is ECONFLICT.
// The storetest package is the behaviour contract every implementation passes.
type Store interface {
	CatalogStore
	PackStore
	IntentStore
	PlanStore
	OperationStore
	// Ping returns EUNAVAILABLE when the store cannot serve requests.
	Ping(ctx context.Context) error
	Close() error
}

// CatalogStore holds resources and answers topology questions.
type CatalogStore interface {
	// ImportResources upserts resources by key in one transaction: all or
	// none. Relationship targets must exist in the batch or the store
	// (EINVALID otherwise). Versions are not checked: an import is the
	// catalog's truth.
	ImportResources(ctx context.Context, org string, rs []*Resource) (ImportResult, error)
	// CreateResource stores a new resource (ECONFLICT when its key exists).
	CreateResource(ctx context.Context, org string, r *Resource) error
	// UpdateResource writes r when r.Version is the stored version
	// (ECONFLICT otherwise, ENOTFOUND when missing) and bumps it.
	UpdateResource(ctx context.Context, org string, r *Resource) error
	// GetResource returns a resource by id (ENOTFOUND).
	GetResource(ctx context.Context, org, id string) (*Resource, error)
	// GetResourceByKey returns a resource by key, type/name (ENOTFOUND).
	GetResourceByKey(ctx context.Context, org, key string) (*Resource, error)
	// GetResources returns resources by id in the order asked; missing ids give nil.
	GetResources(ctx context.Context, org string, ids []string) ([]*Resource, error)
	// GetResourcesByKey returns resources by key in the order asked; missing keys give nil.
	GetResourcesByKey(ctx context.Context, org string, keys []string) ([]*Resource, error)
	// ListResources returns a page of resources ordered by key and the total.
	ListResources(ctx context.Context, org string, f ResourceFilter) ([]*Resource, int, error)
	// FindCandidates considers every resource providing q.Capability,
	// directly or through bounded capability implication, and checks each
	// constraint and its lifecycle (see CheckCandidate). It returns one
	// page of the passing candidates in rank order (q.SkipPassing, then
	// up to q.MaxPassing) and the nearest misses up to q.MaxRejected, and
	// counts the rest (see SelectCandidates).
	FindCandidates(ctx context.Context, org string, q CandidateQuery) (CandidateResult, error)
	// TopologyValue finds key on the resource or, breadth first through
	// runs_on up to maxDepth hops, on what it runs on.
	TopologyValue(ctx context.Context, org, resourceID, key string, maxDepth int) (TopologyHit, error)
	// Dependencies walks relationships from a resource: outgoing (what it
	// depends on) or incoming (what depends on it), up to depth hops.
	// The walk reads at most limit resources: past them it is
	// WalkTooLarge.
	Dependencies(ctx context.Context, org, resourceID string, dir Direction, depth, limit int) ([]Dependency, error)
	// Paths finds the shortest paths between two resources (PathQuery):
	// every path of the q.Max shortest lengths, which SelectPaths orders
	// and cuts.
	Paths(ctx context.Context, org string, q PathQuery) ([]ResourcePath, error)
}

// PackStore holds scenario packs and what they bring.
type PackStore interface {
	// InstallPack stores a pack and its types, capabilities, scenarios and
	// policies. Installing the same id and version again is a no-op when
	// the digest matches and ECONFLICT when it differs.
	InstallPack(ctx context.Context, org string, p *ScenarioPack) (created bool, err error)
	ListPacks(ctx context.Context, org string) ([]*ScenarioPack, error)
	// ListPackRefs names the installed packs (id@version, sorted) without
	// reading them: a pack's content never changes under its ref, so the
	// refs say whether anything read from the packs is still current.
	ListPackRefs(ctx context.Context, org string) ([]string, error)
	ListResourceTypes(ctx context.Context, org string) ([]*ResourceType, error)
	ListCapabilities(ctx context.Context, org string) ([]*CapabilityDefinition, error)
	GetCapability(ctx context.Context, org, key string) (*CapabilityDefinition, error)
	ListScenarios(ctx context.Context, org string, f ScenarioFilter) ([]*Scenario, error)
	// GetScenario returns a scenario by id@version, or the newest version
	// when ref is a bare id (ENOTFOUND).
	GetScenario(ctx context.Context, org, ref string) (*Scenario, error)
	ListPolicies(ctx context.Context, org string) ([]*Policy, error)
}

// NewestScenario is the newest installed version of the scenario id
// (ENOTFOUND when none is): the rule both stores' GetScenario follow for
// a ref without a version. ListScenarios orders versions oldest first.
func NewestScenario(ctx context.Context, s interface {
	ListScenarios(ctx context.Context, org string, f ScenarioFilter) ([]*Scenario, error)
}, org, id string) (*Scenario, error) {
	all, err := s.ListScenarios(ctx, org, ScenarioFilter{ID: id})
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, NotFound("scenario", id)
	}
	return all[len(all)-1], nil
}

// IntentStore holds intents.
type IntentStore interface {
	CreateIntent(ctx context.Context, org string, i *Intent) error
	UpdateIntent(ctx context.Context, org string, i *Intent) error
	GetIntent(ctx context.Context, org, id string) (*Intent, error)
	ListIntents(ctx context.Context, org string, f IntentFilter) ([]*Intent, int, error)
}

// PlanStore holds plans.
type PlanStore interface {
	// CreatePlan stores a new plan and the updated intent in one
	// transaction, and replaced (when not nil: the intent's previous plan,
	// now superseded); the intent's and replaced's versions must match
	// (ECONFLICT).
	CreatePlan(ctx context.Context, org string, p *Plan, i *Intent, replaced *Plan) error
	// UpdatePlan writes p when its version is current, and i with it in the
	// same transaction when i is not nil (ECONFLICT when either is stale).
	UpdatePlan(ctx context.Context, org string, p *Plan, i *Intent) error
	GetPlan(ctx context.Context, org, id string) (*Plan, error)
	// GetPlanRevision returns one immutable revision of a plan (ENOTFOUND).
	// Every write of a plan at a revision without a snapshot stores one
	// (RevisionWrite), in the write's transaction.
	GetPlanRevision(ctx context.Context, org, planID string, revision int) (*PlanRevision, error)
	// ListPlanRevisions returns every revision of a plan, oldest first.
	ListPlanRevisions(ctx context.Context, org, planID string) ([]*PlanRevision, error)
	ListPlans(ctx context.Context, org, intentID string) ([]*Plan, error)
	// ListProviderBindings returns up to limit bindings (of any plan's
	// current revision) that bind resource resourceID as their provider,
	// newest plan first: what depends on the resource through plans.
	ListProviderBindings(ctx context.Context, org, resourceID string, limit int) ([]ProviderBinding, error)
}

// ProviderBinding names one binding of a plan: the plan and the
// binding's key (ResourceBinding.ID).
type ProviderBinding struct {
	PlanID  string
	Binding string
}

// ImportResult counts what an import did.
type ImportResult struct {
	Created int `json:"created"`
	Updated int `json:"updated"`
}

// ResourceFilter selects resources; After is the key to start after.
type ResourceFilter struct {
	Type        string
	Environment string
	Capability  string
	Lifecycle   LifecycleStatus
	// Health keeps resources in one of these health statuses (none: any).
	Health []HealthStatus
	// Search keeps resources whose key or name contains it, ignoring case.
	Search string
	After  string
	Limit  int
}

// ScenarioFilter selects scenarios.
type ScenarioFilter struct {
	ID                 string
	Action             string
	TargetResourceType string
	// Provides selects scenarios whose result provides this capability.
	Provides string
}

// IntentFilter selects intents; After is the id to start after.
type IntentFilter struct {
	Status IntentStatus
	After  string
	Limit  int
}

// CandidateQuery asks for providers of a capability under constraints whose
// references are already resolved to values.
type CandidateQuery struct {
	Capability  string
	Constraints map[string]any
	// MaxImplication bounds the IMPLIES* walk; 0 means DefaultImplicationDepth.
	MaxImplication int
	// MaxRejected bounds how many failing candidates are returned with
	// their checks; 0 means DefaultMaxRejected, negative means all.
	MaxRejected int
	// MaxPassing bounds how many passing candidates are returned, in rank
	// order (direct providers first, then by key), after skipping the
	// first SkipPassing: the planner reads the next page only when
	// policies rejected every candidate of this one. 0 means
	// DefaultMaxPassing, negative means all.
	MaxPassing  int
	SkipPassing int
	// Provider, when set, is the key of the only resource considered: the
	// user chose it explicitly, and its checks are all that is asked.
	Provider string
	// Lifecycles are the lifecycle statuses a candidate may be in (none:
	// active only).
	Lifecycles Lifecycles
	// Owner is the key of the resource the search is for (the intent's
	// target): neither it nor what is part_of it counts among a
	// candidate's consumers, so re-applying a workload keeps the provider
	// it already uses.
	Owner string
}

// MaxConsumers bounds the consumer keys a candidate carries; past it,
// MoreConsumers says there are more (a provider used by thousands costs
// no more to judge than one used by twenty).
const MaxConsumers = 20

// Defaults of CandidateQuery.
const (
	DefaultImplicationDepth = 4
	DefaultMaxRejected      = 10
	DefaultMaxPassing       = 20
)

// CandidateResult is the answer of FindCandidates.
type CandidateResult struct {
	// Candidates are ordered direct providers first, then by key.
	Candidates []Candidate
	// Considered counts every provider looked at; Passing how many of
	// them pass every check (returned or not).
	Considered int
	Passing    int
	// Omitted counts failing candidates not returned; OmittedBy counts, for
	// each constraint key, how many of them failed it.
	Omitted   int
	OmittedBy map[string]int
}

// SelectCandidates cuts a full candidate list (with Failed filled, in the
// stores' order: direct providers first, then by key) down to what
// FindCandidates returns: the page of passing candidates q asks for, the
// failing ones with the fewest failed checks (then nearest implication,
// then key) up to q.MaxRejected, and counts of the rest. The result keeps
// the order of all. Every store gives this same answer; callers then fill
// Checks of what was kept.
func SelectCandidates(all []Candidate, q CandidateQuery) CandidateResult {
	maxRejected, maxPassing := q.MaxRejected, q.MaxPassing
	if maxRejected == 0 {
		maxRejected = DefaultMaxRejected
	}
	if maxPassing == 0 {
		maxPassing = DefaultMaxPassing
	}
	res := CandidateResult{Considered: len(all)}
	var failing []int
	keep := make([]bool, len(all))
	for i := range all {
		if !all[i].Passed() {
			failing = append(failing, i)
			continue
		}
		keep[i] = res.Passing >= q.SkipPassing && (maxPassing < 0 || res.Passing < q.SkipPassing+maxPassing)
		res.Passing++
	}
	// failing is in list order already, so a stable sort by the number of
	// failed checks keeps implication and key order among equals.
	slices.SortStableFunc(failing, func(a, b int) int { return len(all[a].Failed) - len(all[b].Failed) })
	for n, i := range failing {
		if maxRejected < 0 || n < maxRejected {
			keep[i] = true
			continue
		}
		if res.OmittedBy == nil {
			res.OmittedBy = map[string]int{}
		}
		res.Omitted++
		for _, k := range all[i].Failed {
			res.OmittedBy[k]++
		}
	}
	for i := range all {
		if keep[i] {
			res.Candidates = append(res.Candidates, all[i])
		}
	}
	return res
}

// Candidate is one provider found by FindCandidates.
type Candidate struct {
	Resource *Resource
	// Capability is the capability the resource provides; Via is the
	// implication path from it to the wanted capability (empty when direct).
	Capability string
	Via        []string
	// Failed lists the keys of the checks that failed (see CandidateFailures).
	Failed []string
	// Checks explains every check; stores fill it for returned candidates.
	Checks []ConstraintCheck
	// Consumers are the keys of the resources that run on, depend on, use
	// or connect to the candidate — deleted ones, the query's Owner and
	// what is part_of it not counted — sorted, at most MaxConsumers of
	// them; MoreConsumers says there are more (which ones are listed then
	// is the order the store meets them in: reading them all to sort
	// would make a crowded provider cost its crowd). Stores fill them for
	// returned candidates. Policies read them as provider.consumers and
	// provider.more_consumers (a dedicated provider serves one workload).
	Consumers     []string
	MoreConsumers bool
}

// CapConsumers sorts keys (each once) and keeps at most MaxConsumers,
// saying whether it dropped any.
func CapConsumers(keys []string) ([]string, bool) {
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if len(keys) > MaxConsumers {
		return keys[:MaxConsumers], true
	}
	return keys, false
}

// Passed reports whether every check passed.
func (c *Candidate) Passed() bool { return len(c.Failed) == 0 }

// TopologyHit is where TopologyValue found its value.
type TopologyHit struct {
	Found bool
	Value any
	// From is the key of the resource that holds the value; Path lists the
	// resource keys walked from the start to it.
	From string
	Path []string
}

// Direction of a dependency walk.
type Direction string

const (
	Outgoing Direction = "outgoing"
	Incoming Direction = "incoming"
)

// Dependency is one resource reached by a dependency walk.
type Dependency struct {
	Resource     *Resource
	Relationship RelationshipType
	// From is the key of the resource on the other end of the edge.
	From  string
	Depth int
}

// Entity is any entity stored on its own: a Resource, ResourceType,
// CapabilityDefinition, ScenarioPack, Scenario, Intent or Plan. GraphQL
// exposes entities through its Node interface.
type Entity interface{}

// IsEntity marks the federation entities (an Apollo Federation subgraph's
// _Entity union: gqlgen's federation plugin asks the bound types for it).
func (Resource) IsEntity()  {}
func (Operation) IsEntity() {}
func (Intent) IsEntity()    {}
func (Plan) IsEntity()      {}
