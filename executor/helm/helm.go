// Package helm is Capstan's Helm runner: it installs, upgrades, rolls
// back and uninstalls the charts a pack ships (capstan.Chart; no chart
// repository is reached) on a job's target cluster, through the Helm SDK
// (helm.sh/helm/v4). An install or upgrade waits until the release's
// objects are ready (Helm's kstatus watcher) and rolls back within the
// step when it fails, with the rollback as evidence; a compensation
// (undo) rolls the release back to the revision before, or uninstalls a
// first install. docs/KUBERNETES.md.
package helm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	helmkube "helm.sh/helm/v4/pkg/kube"
	release "helm.sh/helm/v4/pkg/release"
	"helm.sh/helm/v4/pkg/storage/driver"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/kube"
)

func init() {
	// Helm applies server-side under this field manager: the same one as
	// the kubernetes runner, so drift reads one owner for both.
	helmkube.ManagedFieldsManager = kube.FieldManager
}

// Runner runs `helm` jobs.
type Runner struct {
	// Dial dials the API server: the egress allow-list's.
	Dial kube.Dialer
}

// Outcome is what a step did to its release, as its output and evidence
// record it.
type Outcome struct {
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	// Action: installed, upgraded, unchanged, rolled-back, uninstalled,
	// absent; or failed-then-rolled-back when the step's own change
	// failed and was undone.
	Action   string `json:"action"`
	Revision int    `json:"revision,omitempty"`
	Status   string `json:"status,omitempty"`
	Chart    string `json:"chart,omitempty"`
	// ManifestSHA256 is the digest of the rendered objects the release
	// holds now.
	ManifestSHA256 string `json:"manifest_sha256,omitempty"`
	// objects are those objects as Helm applied them (releaseObjects):
	// the evidence of a step that succeeded records them, for drift.
	objects []any
}

// Run runs one attempt.
func (r Runner) Run(ctx context.Context, j job.Job) job.Result {
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	if j.Target == nil || j.Target.Cluster == nil {
		return job.Result{ExitCode: -1, ErrKind: job.ErrKindTarget, Err: fmt.Errorf("job %s: target %q is not a cluster (a kubernetes.cluster resource bound to the node)", j.NodeID, j.Spec.Target)}
	}
	params := kube.Params(j.Env)
	name, ns, err := names(j.Spec, params)
	if err != nil {
		return job.Result{ExitCode: -1, ErrKind: kube.ErrKindInvalid, Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
	}
	if job.Closed(j.Deadline) { // a replica stalled past its lease starts nothing
		return job.Result{ExitCode: -1, ErrKind: job.ErrKindLease, Err: fmt.Errorf("job %s: the executor's lease ran out before it was renewed", j.NodeID)}
	}
	cfg, err := configuration(j.Target.Cluster, r.Dial, ns)
	if err != nil {
		return failed(j, nil, err)
	}
	if j.Spec.Undo {
		out, err := undo(ctx, cfg, name, ns, j.Timeout())
		return result(j, out, err)
	}
	ch, err := loadChart(j.Spec)
	if err != nil {
		return job.Result{ExitCode: -1, ErrKind: kube.ErrKindInvalid, Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
	}
	values, err := valuesOf(j.Spec.Values, params)
	if err != nil {
		return job.Result{ExitCode: -1, ErrKind: kube.ErrKindInvalid, Err: fmt.Errorf("job %s: values: %w", j.NodeID, err)}
	}
	started := time.Now()
	out, err := installOrUpgrade(ctx, cfg, ch, values, name, ns, j)
	if err != nil && (out.Action == "failed-then-uninstalled" || out.Action == "failed-then-rolled-back") {
		err = withWarnings(ctx, j, r.Dial, ns, name, started, err)
	}
	return result(j, out, err)
}

// whyBudget bounds the reads that say why a release did not become ready,
// after its own time ran out.
const whyBudget = 10 * time.Second

// withWarnings adds to a failed release's error the warning events of
// its objects since the step began (a ReplicaSet that could not make its
// pods, a pod that could not pull): what an analyzer and a person read,
// the objects themselves gone with the rollback.
func withWarnings(ctx context.Context, j job.Job, dial kube.Dialer, ns, release string, since time.Time, err error) error {
	client, cerr := kube.Connect(j.Target.Cluster, dial)
	if cerr != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), whyBudget) // read-only: the step's own time has run out
	defer cancel()
	if warnings := client.Warnings(ctx, ns, release, since); len(warnings) > 0 {
		return fmt.Errorf("%w; the cluster warned: %s", err, strings.Join(warnings, "; "))
	}
	return err
}

// names fills the release's name and namespace.
func names(spec capstan.RunSpec, params map[string]string) (string, string, error) {
	filled, err := kube.FillRef(capstan.ObjectRef{Name: spec.Release, Namespace: spec.Namespace}, params)
	if err != nil {
		return "", "", err
	}
	if filled.Name == "" || len(filled.Name) > 53 || strings.Trim(filled.Name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		return "", "", capstan.Errorf(capstan.EINVALID, "release %q is not a release name (lower-case letters, digits and '-', at most 53)", filled.Name)
	}
	return filled.Name, filled.Namespace, nil
}

// loadChart reads the chart the plan carries.
func loadChart(spec capstan.RunSpec) (*chartv2.Chart, error) {
	if len(spec.ChartFiles) == 0 {
		return nil, capstan.Errorf(capstan.EINVALID, "the plan carries no files of chart %q", spec.Chart)
	}
	paths := make([]string, 0, len(spec.ChartFiles))
	for p := range spec.ChartFiles {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	files := make([]*archive.BufferedFile, 0, len(paths))
	for _, p := range paths {
		files = append(files, &archive.BufferedFile{Name: p, Data: []byte(spec.ChartFiles[p])})
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "chart %s: %v", spec.Chart, err)
	}
	return ch, nil
}

// valuesOf reads a step's values: YAML whose string values may hold
// placeholders, filled as a manifest's are (values only).
func valuesOf(doc string, params map[string]string) (map[string]any, error) {
	if strings.TrimSpace(doc) == "" {
		return map[string]any{}, nil
	}
	objs, err := kube.Values(doc, params)
	if err != nil {
		return nil, err
	}
	return objs, nil
}

// configuration is Helm's configuration for one release namespace on
// the target cluster, its releases stored as Secrets there.
func configuration(c *job.Cluster, dial kube.Dialer, ns string) (*action.Configuration, error) {
	cfg := action.NewConfiguration()
	cfg.SetLogger(slog.DiscardHandler)
	if err := cfg.Init(newGetter(kube.RESTConfig(c, dial), ns), ns, "secret"); err != nil {
		return nil, kube.Classify(c.Server, "preparing helm", err)
	}
	return cfg, nil
}

// helmContext is the context an install or upgrade runs in: never
// ended by the step's deadline. When its context ends, Helm's SDK (v4.3)
// returns at once but leaves the goroutine that applies and waits
// running; its failure then rolls back a second time and blocks forever
// on a channel nobody reads. Helm's own timeout (waitBudget) bounds the
// wait instead, and its rollback the rest, so the step still ends within
// its timeout; a cancel of the operation waits for them too.
func helmContext(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// installOrUpgrade installs the release, or upgrades the one there; a
// failure rolls back within the step.
func installOrUpgrade(ctx context.Context, cfg *action.Configuration, ch *chartv2.Chart, values map[string]any, name, ns string, j job.Job) (Outcome, error) {
	last, err := latest(cfg, name)
	if err != nil {
		return Outcome{Release: name, Namespace: ns}, err
	}
	if last == nil || last.Status() == "uninstalled" {
		in := action.NewInstall(cfg)
		in.ReleaseName, in.Namespace, in.Timeout = name, ns, waitBudget(j.Timeout())
		in.WaitStrategy, in.RollbackOnFailure, in.ForceConflicts = helmkube.StatusWatcherStrategy, true, j.Spec.Force
		in.Replace = last != nil
		rel, err := in.RunWithContext(helmContext(ctx), ch, values)
		out := outcomeOf(rel, name, ns, "installed")
		if err != nil {
			out.Action = "failed-then-uninstalled"
		}
		return out, err
	}
	up := action.NewUpgrade(cfg)
	up.Namespace, up.Timeout = ns, waitBudget(j.Timeout())
	up.WaitStrategy, up.RollbackOnFailure, up.ForceConflicts = helmkube.StatusWatcherStrategy, true, j.Spec.Force
	up.ServerSideApply = "true"
	rel, err := up.RunWithContext(helmContext(ctx), name, ch, values)
	if err != nil {
		after, lerr := latest(cfg, name)
		if lerr != nil {
			return Outcome{Release: name, Namespace: ns, Action: "failed"}, fmt.Errorf("%w (and reading the release after its rollback: %v)", err, lerr)
		}
		return outcomeOf(after, name, ns, "failed-then-rolled-back"), err
	}
	out := outcomeOf(rel, name, ns, "upgraded")
	if a, _ := release.NewAccessor(rel); a != nil && last != nil && a.Manifest() == last.Manifest() {
		out.Action = "unchanged"
	}
	return out, nil
}

// waitBudget is how long an install or upgrade may wait for its objects:
// half the step's timeout, so that the rollback of a failed one, which
// waits as long at most, ends within the step.
func waitBudget(step time.Duration) time.Duration { return step / 2 }

// undo undoes the release's last change: a rollback to the newest
// revision before it that was deployed (not a failed one) and holds
// other objects than the release does now, or the uninstall of a release
// that has none; nothing when there is no release.
func undo(ctx context.Context, cfg *action.Configuration, name, ns string, timeout time.Duration) (Outcome, error) {
	revs, err := history(cfg, name)
	if err != nil || len(revs) == 0 || revs[0].Status() == "uninstalled" {
		return Outcome{Release: name, Namespace: ns, Action: "absent"}, err
	}
	last := revs[0]
	for _, r := range revs[1:] {
		if (r.Status() != "superseded" && r.Status() != "deployed") || r.Manifest() == last.Manifest() {
			continue // a failed revision, or one with what the release holds now (the one a rollback restored)
		}
		rb := action.NewRollback(cfg)
		rb.Version, rb.Timeout, rb.WaitStrategy, rb.ServerSideApply = r.Version(), timeout, helmkube.StatusWatcherStrategy, "true"
		if err := rb.Run(name); err != nil {
			return Outcome{Release: name, Namespace: ns, Revision: last.Version()}, err
		}
		after, err := latest(cfg, name)
		if err != nil {
			return Outcome{Release: name, Namespace: ns}, err
		}
		return outcomeOf(after, name, ns, "rolled-back"), nil
	}
	un := action.NewUninstall(cfg)
	un.Timeout, un.WaitStrategy, un.IgnoreNotFound = timeout, helmkube.StatusWatcherStrategy, true
	if _, err := un.Run(name); err != nil {
		return Outcome{Release: name, Namespace: ns, Revision: last.Version()}, err
	}
	return Outcome{Release: name, Namespace: ns, Action: "uninstalled", Revision: last.Version()}, nil
}

// latest is the release's newest revision, nil when there is none.
func latest(cfg *action.Configuration, name string) (release.Accessor, error) {
	revs, err := history(cfg, name)
	if err != nil || len(revs) == 0 {
		return nil, err
	}
	return revs[0], nil
}

// history is the release's revisions, newest first.
func history(cfg *action.Configuration, name string) ([]release.Accessor, error) {
	h := action.NewHistory(cfg)
	h.Max = 256
	revs, err := h.Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]release.Accessor, 0, len(revs))
	for _, r := range revs {
		a, err := release.NewAccessor(r)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Version() > out[k].Version() })
	return out, nil
}

// outcomeOf records a release revision: a Releaser the SDK returned, or
// an Accessor history read.
func outcomeOf(rel any, name, ns, action string) Outcome {
	out := Outcome{Release: name, Namespace: ns, Action: action}
	if rel == nil {
		return out
	}
	a, ok := rel.(release.Accessor)
	if !ok {
		var err error
		if a, err = release.NewAccessor(rel); err != nil || a == nil {
			return out
		}
	}
	out.Revision, out.Status = a.Version(), a.Status()
	if ch, err := chartAccessor(a); err == nil {
		out.Chart = ch
	}
	sum := sha256.Sum256([]byte(a.Manifest()))
	out.ManifestSHA256 = hex.EncodeToString(sum[:])
	out.objects = releaseObjects(a.Manifest(), name, ns)
	return out
}

// Helm's annotations on every object of a release (what it applies).
const (
	releaseNameAnnotation      = "meta.helm.sh/release-name"
	releaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
)

// releaseObjects are a release's objects as Helm applies them: its
// manifest's, in the release's namespace unless they name one, with the
// annotations Helm adds (capstan.AppliedObjects replaces a release's
// objects by them), recorded as the kubernetes runner records what it
// applies (kube.AppliedRecord). None when the manifest cannot be read
// (too large: drift is then not compared for it).
func releaseObjects(manifest, name, ns string) []any {
	objs, err := kube.Rendered(manifest)
	if err != nil {
		return nil
	}
	out := make([]any, 0, len(objs))
	for _, obj := range objs {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(ns) // a cluster-scoped kind keeps it in the record only: the probe reads it cluster-wide
		}
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[releaseNameAnnotation], ann[releaseNamespaceAnnotation] = name, ns
		obj.SetAnnotations(ann)
		if rec := kube.AppliedRecord(obj); rec != nil {
			out = append(out, rec)
		}
	}
	return out
}

func chartAccessor(a release.Accessor) (string, error) {
	ch, ok := a.Chart().(*chartv2.Chart)
	if !ok || ch == nil || ch.Metadata == nil {
		return "", errors.New("no chart metadata")
	}
	return ch.Metadata.Name + "-" + ch.Metadata.Version, nil
}
