package kube

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/secret"
)

// MaxPreviewObjects bounds the objects one plan preview dry-runs.
const MaxPreviewObjects = 500

// PlanPreviewer previews what a plan's kubernetes steps would change on
// their clusters (the plan preview's dry-run diff): each object is
// dry-run applied (Client.Preview), as the step would apply it now, with
// the node's parameters, under Capstan's identity on that cluster.
// Nothing is written. Compensations and deletions are not previewed.
type PlanPreviewer struct {
	Resources job.Resources
	Secrets   job.Secrets
	// Dial dials the API servers: the egress allow-list's.
	Dial Dialer
}

// PreviewPlan previews plan's kubernetes steps, in the plan's order;
// resource is the key of the resource the plan acts on (its
// ${resource.name}). A step that cannot be previewed is one entry with
// its error; the whole preview is bounded by ProbeTimeout and
// MaxPreviewObjects.
func (p PlanPreviewer) PreviewPlan(ctx context.Context, org string, plan *capstan.Plan, resource string) []capstan.ObjectPreview {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	red, err := p.Secrets.Redactor(ctx, org)
	if err != nil {
		red = secret.Withhold() // nothing shown unmasked
	}
	out := []capstan.ObjectPreview{}
	for i := range plan.Nodes {
		n := &plan.Nodes[i]
		if n.Job == nil || n.Job.Run.Runner != "kubernetes" || n.Job.Run.Delete {
			continue
		}
		for _, o := range p.previewNode(ctx, org, plan, n, resource) {
			if len(out) == MaxPreviewObjects {
				return append(out, capstan.ObjectPreview{Node: n.ID, Error: fmt.Sprintf("the preview stops at %d objects", MaxPreviewObjects)})
			}
			out = append(out, maskPreview(o, red))
		}
	}
	return out
}

func (p PlanPreviewer) previewNode(ctx context.Context, org string, plan *capstan.Plan, n *capstan.PlanNode, resource string) []capstan.ObjectPreview {
	run := n.Job.Run
	failed := func(cluster string, err error) []capstan.ObjectPreview {
		return []capstan.ObjectPreview{{Node: n.ID, Cluster: cluster, Changes: []capstan.FieldDiff{}, Error: capstan.ErrorMessage(err)}}
	}
	target, err := job.PlanTarget(ctx, p.Resources, p.Secrets, org, plan, run.Target)
	if err != nil {
		return failed("", err)
	}
	if target.Cluster == nil {
		return failed(target.Resource, capstan.Errorf(capstan.EINVALID, "target %s is not a cluster", run.Target))
	}
	params, err := p.params(ctx, org, n, resource)
	if err != nil {
		return failed(target.Resource, err)
	}
	objs, err := p.objects(ctx, org, run, params, resource)
	if err != nil {
		return failed(target.Resource, err)
	}
	ns, err := FillRef(capstan.ObjectRef{Namespace: run.Namespace}, params)
	if err != nil {
		return failed(target.Resource, err)
	}
	client, err := Connect(target.Cluster, p.Dial)
	if err != nil {
		return failed(target.Resource, err)
	}
	out := make([]capstan.ObjectPreview, 0, len(objs))
	for _, obj := range objs {
		a, err := client.Preview(ctx, obj, ns.Namespace, run.Force)
		o := capstan.ObjectPreview{Node: n.ID, Cluster: target.Resource, Object: a.Ref(), Action: a.Action, Changes: a.Changes}
		if o.Changes == nil {
			o.Changes = []capstan.FieldDiff{}
		}
		if err != nil {
			o.Action, o.Error = "", capstan.ErrorMessage(err)
		}
		out = append(out, o)
	}
	return out
}

// params are the node's parameters as its job would see them, its
// secret references read, and the resource's name.
func (p PlanPreviewer) params(ctx context.Context, org string, n *capstan.PlanNode, resource string) (map[string]string, error) {
	env := map[string]string{}
	for k, v := range n.JobParameters() {
		s := fmt.Sprint(v)
		if strings.HasPrefix(s, secret.RefPrefix) {
			value, err := job.SecretValue(ctx, p.Secrets, org, "parameter "+k, s)
			if err != nil {
				return nil, err
			}
			s = value
		}
		env["CAPSTAN_PARAM_"+job.EnvName(k)] = s
	}
	if _, name, ok := capstan.SplitResourceKey(resource); ok {
		env["CAPSTAN_RESOURCE_NAME"] = name
	}
	return Params(env), nil // as the step reads them
}

// objects are what the step would apply: its manifests, or for a
// reapply the resource's recorded objects.
func (p PlanPreviewer) objects(ctx context.Context, org string, run capstan.RunSpec, params map[string]string, resource string) ([]*unstructured.Unstructured, error) {
	if !run.Reapply {
		return Objects(run.Manifests, params)
	}
	r, err := p.Resources.GetResourceByKey(ctx, org, resource)
	if err != nil {
		return nil, err
	}
	return Reapplied(r.DesiredState[capstan.AppliedObjectsKey])
}

// maskPreview masks every secret value of the organization in what a
// preview shows.
func maskPreview(o capstan.ObjectPreview, red *secret.Redactor) capstan.ObjectPreview {
	o.Error = red.String(o.Error)
	for i, c := range o.Changes {
		o.Changes[i].Old, o.Changes[i].New = red.Value(c.Old), red.Value(c.New)
	}
	return o
}
