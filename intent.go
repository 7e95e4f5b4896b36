package capstan

// Intent mode values.
const (
	ModeSimple   = "simple"
	ModeAdvanced = "advanced"
)

// Intent is what a user wants, not how to get it. It outlives its operations
// as an audit object (SPEC §5.1).
type Intent struct {
	Meta
	Actor              string         `json:"actor"`
	Action             string         `json:"action"`
	TargetResourceType string         `json:"target_resource_type"`
	DesiredResult      map[string]any `json:"desired_result,omitempty"`
	// Constraints carry the intent's context: environment, cluster, region.
	Constraints map[string]any `json:"constraints,omitempty"`
	// Providers maps requirement ids to resource keys the user chose
	// explicitly; the only way a requirement names a provider before
	// resolution (invariant 6).
	Providers map[string]string `json:"providers,omitempty"`
	// Scenario optionally pins the scenario (id or id@version).
	Scenario     string       `json:"scenario,omitempty"`
	Mode         string       `json:"mode"`
	Status       IntentStatus `json:"status"`
	LatestPlanID string       `json:"latest_plan_id,omitempty"`
}

// Environment returns the intent's environment constraint, or "".
func (i *Intent) Environment() string {
	s, _ := i.Constraints["environment"].(string)
	return s
}

// TargetKey names the resource the intent's operation creates or changes:
// its target type and the name it asks for ("" when it names none).
func (i *Intent) TargetKey() string {
	name, _ := i.DesiredResult["name"].(string)
	if name == "" || !ValidKey(i.TargetResourceType) {
		return ""
	}
	return ResourceKey(i.TargetResourceType, name)
}

// Validate checks the intent.
func (i *Intent) Validate() error {
	var p Problems
	if i.Actor == "" {
		p.Addf("actor is empty")
	}
	if !ValidKey(i.Action) {
		p.Addf("action %q is not a valid key", i.Action)
	}
	if !ValidKey(i.TargetResourceType) {
		p.Addf("target resource type %q is not a valid key", i.TargetResourceType)
	}
	if env, ok := i.Constraints["environment"]; ok {
		if s, isStr := env.(string); !isStr || !ValidKey(s) {
			p.Addf("constraint environment must be a key, got %v", env)
		}
	}
	switch i.Mode {
	case ModeSimple, ModeAdvanced:
	default:
		p.Addf("mode must be simple or advanced, got %q", i.Mode)
	}
	for req, key := range i.Providers {
		if _, _, ok := SplitResourceKey(key); !ok {
			p.Addf("provider for %s: %q is not a resource key (type/name)", req, key)
		}
	}
	if !IntentStatuses.Valid(i.Status) {
		p.Addf("unknown status %q", i.Status)
	}
	return p.Err("intent")
}

// Move changes the intent's status or returns the illegal transition error.
func (i *Intent) Move(to IntentStatus) error {
	if err := IntentStatuses.Check(i.Status, to); err != nil {
		return err
	}
	i.Status = to
	return nil
}
