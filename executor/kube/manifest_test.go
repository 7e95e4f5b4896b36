package kube_test

import (
	"strings"
	"testing"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/kube"
)

func TestManifestsTakeParametersAsValuesOnly(t *testing.T) {
	params := map[string]string{"param.replicas": "3", "param.version": "2.5.0", "param.name": "tempo", "param.on": "true", "param.evil": "x\nkind: ClusterRoleBinding", "resource.name": "prod-tempo"}
	cases := []struct {
		name, manifests string
		check           func(t *testing.T, objs []map[string]any)
		err             string
	}{
		{name: "a whole number placeholder is a number", manifests: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: '${param.replicas}'}\n",
			check: func(t *testing.T, objs []map[string]any) {
				if got := objs[0]["spec"].(map[string]any)["replicas"]; got != int64(3) {
					t.Fatalf("replicas = %#v, want int64 3", got)
				}
			}},
		{name: "a version stays a string", manifests: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {v: '${param.version}', b: '${param.on}'}\n",
			check: func(t *testing.T, objs []map[string]any) {
				data := objs[0]["data"].(map[string]any)
				if data["v"] != "2.5.0" || data["b"] != true {
					t.Fatalf("data = %#v", data)
				}
			}},
		{name: "inside a string", manifests: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '${param.name}-config'}\n",
			check: func(t *testing.T, objs []map[string]any) {
				if got := objs[0]["metadata"].(map[string]any)["name"]; got != "tempo-config" {
					t.Fatalf("name = %#v", got)
				}
			}},
		{name: "a value cannot add a document or a field", manifests: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {v: '${param.evil}'}\n",
			check: func(t *testing.T, objs []map[string]any) {
				if len(objs) != 1 || objs[0]["data"].(map[string]any)["v"] != params["param.evil"] {
					t.Fatalf("objects = %#v", objs)
				}
			}},
		{name: "several documents, empty ones skipped", manifests: "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
			check: func(t *testing.T, objs []map[string]any) {
				if len(objs) != 2 {
					t.Fatalf("%d objects, want 2", len(objs))
				}
			}},
		{name: "unknown parameter", manifests: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '${param.nope}'}\n", err: `${param.nope} is not one of`},
		{name: "the resource's name", manifests: "apiVersion: v1\nkind: Namespace\nmetadata: {name: '${resource.name}'}\n",
			check: func(t *testing.T, objs []map[string]any) {
				if got := objs[0]["metadata"].(map[string]any)["name"]; got != "prod-tempo" {
					t.Fatalf("name = %#v", got)
				}
			}},
		{name: "placeholder as a key", manifests: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {'${param.name}': x}\n", err: "not keys"},
		{name: "no name", manifests: "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: c-}\n", err: "no metadata.name"},
		{name: "no kind", manifests: "apiVersion: v1\nmetadata: {name: c}\n", err: "apiVersion and a kind"},
		{name: "bad namespace", manifests: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: 'A_B'}\n", err: "namespace"},
		{name: "not yaml", manifests: "apiVersion: [\n", err: "document 1"},
		{name: "nothing", manifests: "---\n", err: "no object"},
		{name: "too many", manifests: strings.Repeat("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", kube.MaxObjects+1), err: "more than"},
		{name: "too large", manifests: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {v: '" + strings.Repeat("x", kube.MaxManifestBytes) + "'}\n", err: "bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := kube.Objects(tc.manifests, params)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || capstan.ErrorCode(err) != capstan.EINVALID {
					t.Fatalf("err = %v (%s), want INVALID containing %q", err, capstan.ErrorCode(err), tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var raw []map[string]any
			for _, o := range objs {
				raw = append(raw, o.Object)
			}
			tc.check(t, raw)
		})
	}
}

func TestParamsAreTheJobsEnvironment(t *testing.T) {
	got := kube.Params(map[string]string{"CAPSTAN_PARAM_CHART_VERSION": "1.10.0", "CAPSTAN_NODE": "x", "PATH": "/bin", "CAPSTAN_RESOURCE_NAME": "tempo"})
	if len(got) != 2 || got["param.chart_version"] != "1.10.0" || got["resource.name"] != "tempo" {
		t.Fatalf("params = %v", got)
	}
	// A binding's attributes, the strings among them: a store's endpoint
	// and its key (resolved from its secret reference before this).
	got = kube.Params(map[string]string{"CAPSTAN_BINDING_OBJECT_STORAGE_ATTRIBUTES": `{"endpoint": "http://10.0.0.7:7070", "secret_key": "0123456789", "gb": 5}`})
	if len(got) != 2 || got["binding.object_storage.endpoint"] != "http://10.0.0.7:7070" {
		t.Fatalf("params = %v", got)
	}
	objs, err := kube.Objects("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {key: '${binding.object_storage.secret_key}', url: 's3 at ${binding.object_storage.endpoint}'}\n", got)
	if err != nil {
		t.Fatal(err)
	}
	data := objs[0].Object["stringData"].(map[string]any)
	if data["key"] != "0123456789" || data["url"] != "s3 at http://10.0.0.7:7070" {
		t.Fatalf("stringData = %#v: an attribute fills as the string it is", data)
	}
}

func TestDiffListsChangedFieldsOnly(t *testing.T) {
	before := map[string]any{"metadata": map[string]any{"name": "web", "resourceVersion": "1", "managedFields": []any{"x"}},
		"spec":   map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "a", "image": "nginx:1"}}}}},
		"status": map[string]any{"replicas": int64(3)}}
	after := map[string]any{"metadata": map[string]any{"name": "web", "resourceVersion": "2", "labels": map[string]any{"team": "obs"}},
		"spec":   map[string]any{"replicas": float64(3), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "a", "image": "nginx:2"}}}}},
		"status": map[string]any{"replicas": int64(1)}}
	got := kube.Diff(before, after)
	want := []string{"metadata.labels.team", "spec.template.spec.containers[0].image"}
	if len(got) != len(want) {
		t.Fatalf("diff = %#v, want paths %v", got, want)
	}
	for i, c := range got {
		if c.Path != want[i] {
			t.Fatalf("diff[%d] = %#v, want path %s", i, c, want[i])
		}
	}
	if got[1].Old != "nginx:1" || got[1].New != "nginx:2" {
		t.Fatalf("image change = %#v", got[1])
	}
}
