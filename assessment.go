package capstan

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ObserveTarget is the only target an observe probe names: the host the
// resource runs on (its runs_on relationship to a compute node).
const ObserveTarget = "runs_on"

// ObserveSpec is how a resource type is observed after its operations:
// the probes a health assessment runs on the real host and how often.
type ObserveSpec struct {
	// Every is the interval between scheduled assessments of one
	// resource (a duration, at least 10s; 5m when empty).
	Every string `json:"every,omitempty"`
	// Ignore lists desired-state fields another owner changes (an
	// autoscaler's replicas): never drift (path patterns: spec.*).
	Ignore []string `json:"ignore,omitempty"`
	// Probes run against the resource's host; one that Observes a field
	// of the desired state reports the value it saw for it.
	Probes []Probe `json:"probes"`
}

// DefaultObserveEvery is a resource type's assessment interval when its
// observe spec names none; MinObserveEvery the shortest one allowed.
const (
	DefaultObserveEvery = 5 * time.Minute
	MinObserveEvery     = 10 * time.Second
)

// Interval is the spec's assessment interval.
func (o *ObserveSpec) Interval() time.Duration {
	d, err := time.ParseDuration(o.Every)
	if err != nil || d <= 0 {
		return DefaultObserveEvery
	}
	return max(d, MinObserveEvery)
}

// observeProbeTypes are the probe types that look at real state from
// outside: the only ones an observe spec may run (a command probe would
// run on the control plane, a resource_state probe would read Capstan's
// own record, a sim probe checks nothing).
var observeProbeTypes = map[string]bool{"tcp": true, "http": true, "ssh_command": true, "file": true, "service": true, "kubernetes": true}

// Validate checks the observe spec of resource type typ.
func (o *ObserveSpec) Validate(typ string, p *Problems) {
	if o.Every != "" {
		d, err := time.ParseDuration(o.Every)
		if err != nil || d < MinObserveEvery {
			p.Addf("resource type %s: observe every %q is not a duration of at least %s", typ, o.Every, MinObserveEvery)
		}
	}
	if len(o.Probes) == 0 {
		p.Addf("resource type %s: observe needs at least one probe", typ)
	}
	names := map[string]bool{}
	for _, pr := range o.Probes {
		if names[pr.Name] {
			p.Addf("resource type %s: observe probe %s is declared twice", typ, pr.Name)
		}
		names[pr.Name] = true
		if !observeProbeTypes[pr.Type] {
			p.Addf("resource type %s: observe probe %s is a %s probe (want tcp, http, ssh_command, file, service or kubernetes: what looks at the real host or cluster)", typ, pr.Name, pr.Type)
			continue
		}
		if pr.Target != ObserveTarget && !(pr.Type == "http" && pr.Target == "") {
			p.Addf("resource type %s: observe probe %s targets %q (want %s: the host or cluster the resource runs on)", typ, pr.Name, pr.Target, ObserveTarget)
		}
		validateProbe(pr, p)
	}
}

// Assessment is a resource's last health assessment: what its type's
// observe probes saw on the real host, against its desired state.
type Assessment struct {
	At time.Time `json:"at"`
	// By is who asked for it: a person (assessResource) or the scheduler.
	By     string       `json:"by"`
	Health HealthStatus `json:"health"`
	Reason string       `json:"reason"`
	// Diff holds the fields whose observed value is not the desired one.
	Diff []FieldDrift `json:"diff,omitempty"`
	// Evidence is each probe's verdict with its source (where and when).
	Evidence []Evidence `json:"evidence,omitempty"`
	// Since is when the resource was first assessed with this health.
	Since time.Time `json:"since"`
}

// FieldDrift is one desired-state field observed with another value.
type FieldDrift struct {
	Field    string `json:"field"`
	Desired  any    `json:"desired"`
	Observed any    `json:"observed"`
	// ChangedBy is who changed it, where the host says (a Kubernetes
	// field's manager: kubectl, kubectl-set); empty when unknown.
	ChangedBy string `json:"changed_by,omitempty"`
}

// AssessmentPause stops the scheduled assessments of one resource (an
// on-demand one still runs): who paused them, when and why.
type AssessmentPause struct {
	By   string    `json:"by"`
	At   time.Time `json:"at"`
	Note string    `json:"note"`
}

// BoundResources are the keys of the resources an operation's plan binds
// as providers (its own sub-operations' included) and of the resource it
// changes, each once.
func BoundResources(plan *Plan, own string) []string {
	var keys []string
	seen := map[string]bool{}
	add := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	add(own)
	if plan != nil {
		for _, b := range plan.Bindings {
			if b.Provider != nil && b.Status == BindingResolved {
				add(b.Provider.ResourceKey)
			}
		}
	}
	return keys
}

// UnresolvedDrift says, one line each, which of resources an assessment
// found drifted and no operation has changed since (a repair that ran
// cleared its assessment): what an operation's needs-attention lists and
// what a no_drift gate waits for.
func UnresolvedDrift(resources []*Resource) []string {
	var out []string
	for _, r := range resources {
		if r == nil || r.Assessment == nil || r.Assessment.Health != HealthDrifted {
			continue
		}
		fields := make([]string, 0, len(r.Assessment.Diff))
		for _, d := range r.Assessment.Diff {
			fields = append(fields, d.Field)
		}
		out = append(out, fmt.Sprintf("%s drifted (%s differ from its desired state, since %s): repair it (repairResource)",
			r.Key(), strings.Join(fields, ", "), r.Assessment.Since.UTC().Format(time.RFC3339)))
	}
	return out
}

// AssessorActor is the actor of what a health assessment does: its
// scheduled assessments and the gates its drift proposes. It is no
// person's login (a ':' is not allowed in one).
const AssessorActor = "capstan:assessor"

// DriftGate is the change that holds an operation whose plan binds
// resource key, found drifted, before the first node that uses it and
// has not started (started says which have): an approval gate the SREs
// decide, approved only once the drift is resolved (no_drift). ok is
// false when no node left to run uses it.
func DriftGate(plan *Plan, started map[string]bool, key, reason string) (PlanChange, bool) {
	uses := map[string]bool{}
	for _, b := range plan.Bindings {
		if b.Provider != nil && b.Provider.ResourceKey == key && b.Status == BindingResolved && b.Parent == "" {
			uses[b.ID] = true
		}
	}
	for i := range plan.Nodes {
		n := &plan.Nodes[i]
		if started[n.ID] || !slices.ContainsFunc(n.Requires, func(r string) bool { return uses[r] }) {
			continue
		}
		id := "resolve-drift-" + n.ID
		if len(id) > 128 || plan.Node(id) != nil {
			return PlanChange{}, false
		}
		return PlanChange{Op: ChangeInsertBefore, Node: n.ID, NodeID: id, Reason: reason,
			Spec: &PlanNode{Type: NodeGate, Title: "Resolve the drift of " + key, Gate: &GateSpec{Type: "approval", NoDrift: true,
				RequiredRoles: []string{RoleSRE}, Reason: reason + ": repair it (repairResource), then approve"}}}, true
	}
	return PlanChange{}, false
}
