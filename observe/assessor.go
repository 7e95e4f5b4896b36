// Package observe keeps watching what operations built: a health
// assessment runs a resource type's observe probes on the host the
// resource runs on, decides its health against the desired state its
// last operation set (package assess, a pure function), and records the
// verdict; a scheduler assesses every observed resource on its type's
// interval. Repair is never done here: drift is shown, and a person
// repairs it through a reviewed plan (service.RepairResource).
package observe

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/assess"
	"github.com/capstan-dev/capstan/event"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/probe"
	"github.com/capstan-dev/capstan/secret"
)

// Store is what an assessment reads and writes.
type Store interface {
	GetResourceByKey(ctx context.Context, org, key string) (*capstan.Resource, error)
	ListResourceTypes(ctx context.Context, org string) ([]*capstan.ResourceType, error)
	GetOperation(ctx context.Context, org, id string) (*capstan.Operation, error)
	ApplyOperationChange(ctx context.Context, org string, ch *capstan.OperationChange) error
	UpdateResource(ctx context.Context, org string, r *capstan.Resource) error
	DriftStore
}

// Assessor runs health assessments.
type Assessor struct {
	Store Store
	// Prober runs the observe probes (its remote probes reach the host;
	// a command probe runs in the job sandbox, as a job's does).
	Prober job.Prober
	// Secrets resolves the host's credentials (the ssh.access key).
	Secrets job.Secrets
	Now     func() time.Time
	// Log says why a drift gate could not be asked for (nil: slog's
	// default).
	Log *slog.Logger
}

// Scheduler is the actor of scheduled assessments.
const Scheduler = capstan.AssessorActor

// unreachableKinds are the error kinds of a probe that never reached the
// host, or could not trust or log in to it: nothing of it was observed.
// (A cluster's: unavailable, its token refused: unauthorized.)
var unreachableKinds = map[string]bool{"unreachable": true, "connection_lost": true, "timeout": true, "auth": true, job.ErrKindHostKey: true,
	"unavailable": true, "unauthorized": true}

// Assess assesses the resource key of org now, for by (a person's id or
// Scheduler), and returns it as recorded. A resource another operation
// is changing is not assessed (ECONFLICT); one whose type observes
// nothing, or that is not built (planned, deleted), is refused
// (EINVALID). A write that meets a concurrent change is redone.
func (a *Assessor) Assess(ctx context.Context, org, key, by string) (*capstan.Resource, error) {
	types, err := a.Store.ListResourceTypes(ctx, org)
	if err != nil {
		return nil, err
	}
	return a.assess(ctx, org, key, by, types)
}

// assess is Assess with the organization's resource types read. It
// returns the resource as this assessment wrote it (the store sets its
// version), not as a later one may have: the caller sees its own verdict.
func (a *Assessor) assess(ctx context.Context, org, key, by string, types []*capstan.ResourceType) (*capstan.Resource, error) {
	for try := 0; ; try++ {
		r, err := a.assessOnce(ctx, org, key, by, types)
		if !capstan.IsStale(err) || try == 3 {
			return r, err
		}
	}
}

// ObserveSpec is the observe spec of typ among types (nil: none).
func ObserveSpec(types []*capstan.ResourceType, typ string) *capstan.ObserveSpec {
	for _, t := range types {
		if t.Key == typ {
			return t.Observe
		}
	}
	return nil
}

// Assessable says why r cannot be assessed now (nil: it can).
func Assessable(r *capstan.Resource, spec *capstan.ObserveSpec) error {
	switch {
	case spec == nil:
		return capstan.Errorf(capstan.EINVALID, "resource type %s declares no observe probes: nothing can assess %s", r.Type, r.Key())
	case r.ActiveOperationID != "":
		return capstan.Errorf(capstan.ECONFLICT, "resource %s is being changed by %s: it is assessed once that ends", r.Key(), capstan.Named("operation", capstan.OperationGID(r.ActiveOperationID)))
	case r.LifecycleStatus != capstan.LifecycleActive && r.LifecycleStatus != capstan.LifecycleDegraded:
		return capstan.Errorf(capstan.EINVALID, "resource %s is %s: only an active or degraded resource is assessed", r.Key(), r.LifecycleStatus)
	}
	return nil
}

func (a *Assessor) assessOnce(ctx context.Context, org, key, by string, types []*capstan.ResourceType) (*capstan.Resource, error) {
	r, err := a.Store.GetResourceByKey(ctx, org, key)
	if err != nil {
		return nil, err
	}
	spec := ObserveSpec(types, r.Type)
	if err := Assessable(r, spec); err != nil {
		return nil, err
	}
	if by == Scheduler && r.AssessmentPaused != nil { // paused meanwhile (an on-demand one still runs)
		return nil, capstan.Errorf(capstan.ECONFLICT, "the scheduled assessments of %s are paused", r.Key())
	}
	began := a.now()
	verdict, evidence, observed := a.observe(ctx, org, r, spec)
	next := record(r, verdict, evidence, observed, by, began)
	changed := r.Assessment == nil || r.Assessment.Health != next.Assessment.Health || !slices.EqualFunc(r.Assessment.Diff, next.Assessment.Diff, sameDrift)
	if (changed || by != Scheduler) && r.LastOperationID != "" {
		err = a.recordInTimeline(ctx, org, next, r.HealthStatus, by)
	} else {
		err = a.Store.UpdateResource(ctx, org, next)
	}
	if err != nil {
		return nil, err
	}
	if changed && next.HealthStatus == capstan.HealthDrifted {
		// Running operations that bind it get a gate proposed: a command
		// their owner judges (DriftGates).
		if err := DriftGates(ctx, a.Store, org, key, a.now()); err != nil {
			a.log().Warn("asking for drift gates", "organization", org, "resource", key, "err", capstan.ErrorMessage(err))
		}
	}
	return next, nil
}

// observe runs the spec's probes on r's host and decides.
func (a *Assessor) observe(ctx context.Context, org string, r *capstan.Resource, spec *capstan.ObserveSpec) (assess.Verdict, []capstan.Evidence, map[string]any) {
	host, err := a.host(ctx, org, r)
	if err != nil {
		return assess.Verdict{Health: capstan.HealthUnknown, Reason: "its host cannot be observed: " + capstan.ErrorMessage(err)}, nil, nil
	}
	target := job.ProbeTarget{Org: org, Resource: r.Key(), Hosts: map[string]*job.Target{capstan.ObserveTarget: host}, Desired: r.DesiredState,
		Env: map[string]string{"CAPSTAN_RESOURCE_NAME": r.Name}} // a kubernetes probe's ${resource.name}
	// What a host says may hold a secret of the organization (a probe
	// reading a config file): masked before it is compared or kept.
	var red *secret.Redactor
	if a.Secrets != nil {
		var err error
		if red, err = a.Secrets.Redactor(ctx, org); err != nil {
			return assess.Verdict{Health: capstan.HealthUnknown, Reason: "the secret store cannot mask what is observed: " + capstan.ErrorMessage(err)}, nil, nil
		}
	}
	var obs []assess.Observation
	var evidence []capstan.Evidence
	observed := map[string]any{}
	for _, pr := range spec.Probes {
		check := pr
		check.Observes = "" // assess compares, with the ignore list
		result, source, output := a.Prober.Run(ctx, check, target)
		if !red.Empty() {
			source, output = red.Map(source), red.Bytes(output)
		}
		o := assess.Observation{Probe: pr.Name, Field: pr.Observes, Result: result, Drift: probedDrift(source)}
		kind, _ := source["error_kind"].(string)
		o.Unreachable = unreachableKinds[kind]
		if pr.Observes != "" {
			if v, ok := probe.ObservedValue(pr, source, output); ok {
				o.Value, observed[pr.Observes] = v, v
			}
			source["observes"] = pr.Observes
		}
		obs = append(obs, o)
		evidence = append(evidence, capstan.Evidence{ProducedBy: "assessment", Item: pr.Name, Result: result, Source: source, ObservedAt: a.now()})
	}
	v := assess.Assess(r.DesiredState, obs, spec.Ignore)
	for field, ch := range v.Diff { // a drifted field's evidence fails, whatever the probe said of liveness
		for i := range evidence {
			if evidence[i].Source["observes"] == field {
				evidence[i].Result = capstan.EvidenceFailed
				evidence[i].Source["desired"], evidence[i].Source["observed"] = ch.Desired, ch.Observed
			}
		}
	}
	return v, evidence, observed
}

// host resolves the compute node r runs on to a target.
func (a *Assessor) host(ctx context.Context, org string, r *capstan.Resource) (*job.Target, error) {
	for _, rel := range r.Relationships {
		if rel.Type != capstan.RelRunsOn {
			continue
		}
		node, err := a.Store.GetResourceByKey(ctx, org, rel.Target)
		if err != nil {
			return nil, err
		}
		if node.Provides(job.SSHAccess) == nil && node.Provides(capstan.KubernetesCluster) == nil {
			continue // runs on something Capstan does not reach
		}
		return job.TargetOf(ctx, a.Secrets, org, capstan.ObserveTarget, node)
	}
	return nil, capstan.Errorf(capstan.EINVALID, "%s runs on no compute node with %s and no cluster Capstan reaches", r.Key(), job.SSHAccess)
}

// probedDrift reads the drifted fields a drift probe lists in its
// source (job.DriftProbe).
func probedDrift(source map[string]any) map[string]assess.Change {
	list, _ := source["drift"].([]any)
	if len(list) == 0 {
		return nil
	}
	out := make(map[string]assess.Change, len(list))
	for _, item := range list {
		d, _ := item.(map[string]any)
		field, _ := d["field"].(string)
		by, _ := d["changed_by"].(string)
		out[field] = assess.Change{Desired: d["desired"], Observed: d["observed"], ChangedBy: by}
	}
	return out
}

// record returns r with the verdict: its health, its last assessment,
// and the observed values merged into its observed
// state.
func record(r *capstan.Resource, v assess.Verdict, evidence []capstan.Evidence, observed map[string]any, by string, at time.Time) *capstan.Resource {
	next := *r
	a := &capstan.Assessment{At: at.UTC(), By: by, Health: v.Health, Reason: v.Reason, Evidence: evidence, Since: at.UTC()}
	for _, field := range slices.Sorted(maps.Keys(v.Diff)) {
		ch := v.Diff[field]
		a.Diff = append(a.Diff, capstan.FieldDrift{Field: field, Desired: ch.Desired, Observed: ch.Observed, ChangedBy: ch.ChangedBy})
	}
	if prev := r.Assessment; prev != nil && prev.Health == a.Health {
		a.Since = prev.Since
	}
	next.Assessment = a
	next.HealthStatus = v.Health
	if len(observed) > 0 {
		next.ObservedState = maps.Clone(r.ObservedState)
		if next.ObservedState == nil {
			next.ObservedState = map[string]any{}
		}
		maps.Copy(next.ObservedState, observed)
	}
	return &next
}

func fmtEq(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func sameDrift(a, b capstan.FieldDrift) bool {
	return a.Field == b.Field && fmtEq(a.Desired, b.Desired) && fmtEq(a.Observed, b.Observed)
}

// recordInTimeline writes the resource and a resource.assessed event
// (live.EventResourceAssessed: an assessment that changed its health, or
// that a person asked for) into the timeline of the operation that last
// changed it (invariant 1: a resource holds its current state, its
// history lives in operations).
func (a *Assessor) recordInTimeline(ctx context.Context, org string, r *capstan.Resource, previous capstan.HealthStatus, by string) error {
	op, err := a.Store.GetOperation(ctx, org, r.LastOperationID)
	if err != nil {
		return err
	}
	assessed := event.Resource{What: "assessed", Resource: r.Key(), Health: string(r.HealthStatus), Previous: string(previous),
		Reason: r.Assessment.Reason, Diff: r.Assessment.Diff}
	ch := &capstan.OperationChange{Operation: op, Resources: []*capstan.Resource{r},
		Events: []capstan.OperationEvent{event.Record(by, assessed)}}
	return a.Store.ApplyOperationChange(ctx, org, ch)
}

func (a *Assessor) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Assessor) log() *slog.Logger {
	if a.Log != nil {
		return a.Log
	}
	return slog.Default()
}
