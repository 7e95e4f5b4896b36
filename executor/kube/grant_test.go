package kube_test

import (
	"strings"
	"testing"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/kube"
)

func TestTheGrantIsThePacksRulesAndNoMore(t *testing.T) {
	packs := []*capstan.ScenarioPack{
		{ID: "a", Version: "1.0.0", RBAC: []capstan.RBACRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "create"}, Why: "namespaces"}}},
		{ID: "b", Version: "2.0.0"},
		{ID: "c", Version: "1.1.0", RBAC: []capstan.RBACRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"patch"}, Why: "workloads"}}},
	}
	grant, err := kube.Grant(packs, "capstan-system", "capstan")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.Objects(grant, nil)
	if err != nil {
		t.Fatalf("the grant does not read as manifests: %v\n%s", err, grant)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
	}
	if strings.Join(kinds, ",") != "Namespace,ServiceAccount,ClusterRole,ClusterRoleBinding" {
		t.Fatalf("kinds = %v", kinds)
	}
	rules, _, _ := unstructuredSlice(objs[2].Object, "rules")
	if len(rules) != 2 || !strings.Contains(grant, "# a@1.0.0: namespaces: get,create namespaces on core") || strings.Contains(grant, "*") {
		t.Fatalf("grant:\n%s", grant)
	}
	if _, err := kube.Grant(packs[1:2], "capstan-system", "capstan"); capstan.ErrorCode(err) != capstan.EINVALID {
		t.Fatalf("a grant of nothing: %v", err)
	}
}

func unstructuredSlice(obj map[string]any, key string) ([]any, bool, error) {
	v, ok := obj[key].([]any)
	return v, ok, nil
}
