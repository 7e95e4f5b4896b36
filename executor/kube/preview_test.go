package kube_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/internal/kubetest"
	"github.com/capstan-dev/capstan/secret"
)

// secrets is an organization's secret store as a map.
type secrets map[string]string

func (s secrets) Get(_ context.Context, _, name string) ([]byte, error) {
	v, ok := s[name]
	if !ok {
		return nil, capstan.Errorf(capstan.ENOTFOUND, "no secret %s", name)
	}
	return []byte(v), nil
}
func (s secrets) Put(context.Context, string, string, []byte) error { return nil }
func (s secrets) Redactor(context.Context, string) (*secret.Redactor, error) {
	var values [][]byte
	for _, v := range s {
		values = append(values, []byte(v))
	}
	return secret.NewRedactor(values), nil
}

// catalog is the catalog as a map of resources by key.
type catalog map[string]*capstan.Resource

func (c catalog) GetResourceByKey(_ context.Context, _, key string) (*capstan.Resource, error) {
	if r, ok := c[key]; ok {
		return r, nil
	}
	return nil, capstan.Errorf(capstan.ENOTFOUND, "no resource %s", key)
}

func TestAPlanPreviewShowsWhatWouldChangeAndNoSecret(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "preview")
	token := c.Token(t, ns, append([]rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create", "patch"}}}, workloads...), nil)
	store := secrets{"db-password": "s3cret-value-0123456789", "lab-token": token}
	cluster := &capstan.Resource{Type: capstan.KubernetesCluster, Name: "lab", ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: capstan.KubernetesCluster,
		Attributes: map[string]any{"api_server": c.Server, "ca": string(c.CA), "credentials": "secret:lab-token"}}}}
	manifests := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '${resource.name}'}\ndata: {dsn: 'postgres://app:${param.password}@db', level: '${param.level}'}\n" +
		"---\napiVersion: v1\nkind: Secret\nmetadata: {name: '${resource.name}-db'}\nstringData: {password: '${param.password}'}\n"
	plan := &capstan.Plan{Nodes: []capstan.PlanNode{{ID: "apply", Type: capstan.NodeJob, Parameters: map[string]any{"level": "debug"},
		Job: &capstan.JobContract{Inputs: capstan.JobInputs{Parameters: map[string]any{"password": "secret:db-password", "level": "info"}},
			Run: capstan.RunSpec{Runner: "kubernetes", Target: "cluster", Namespace: ns, Manifests: manifests}}}},
		Bindings: []capstan.ResourceBinding{{ID: "cluster", Status: capstan.BindingResolved, Provider: &capstan.BoundProvider{ResourceKey: cluster.Key()}}}}
	p := kube.PlanPreviewer{Resources: catalog{cluster.Key(): cluster}, Secrets: store, Dial: loopback(t)}

	got := p.PreviewPlan(context.Background(), "acme", plan, "app.config/shop")
	if len(got) != 2 || got[0].Action != "created" || got[1].Action != "created" || got[0].Cluster != cluster.Key() || got[0].Object != "ConfigMap "+ns+"/shop" {
		t.Fatalf("preview = %+v", got)
	}
	text := strings.Builder{}
	for _, o := range got {
		for _, ch := range o.Changes {
			text.WriteString(ch.Path + "=" + fmt.Sprint(ch.New) + "\n")
		}
	}
	if strings.Contains(text.String(), "s3cret-value") || !strings.Contains(text.String(), "data.level=debug") || !strings.Contains(text.String(), "stringData.password=(secret)") || !strings.Contains(text.String(), "data.dsn=postgres://app:"+secret.Mask+"@db") {
		t.Fatalf("the preview's changes:\n%s", text.String())
	}
	if _, err := c.Admin.CoreV1().ConfigMaps(ns).Get(context.Background(), "shop", metav1.GetOptions{}); err == nil {
		t.Fatal("a preview wrote the object")
	}

	t.Run("a step it cannot preview is one entry with why", func(t *testing.T) {
		bad := *plan
		bad.Bindings = nil
		got := p.PreviewPlan(context.Background(), "acme", &bad, "app.config/shop")
		if len(got) != 1 || got[0].Node != "apply" || !strings.Contains(got[0].Error, "not a resolved binding") {
			t.Fatalf("preview = %+v", got)
		}
	})
}
