package kube

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan"
)

// Grant is what an administrator applies to a cluster so that Capstan
// may act on it as the packs declare, and no further: a ServiceAccount,
// a ClusterRole holding the union of the packs' rbac rules (each
// commented with its pack and why), and the binding between them. The
// token of that ServiceAccount is the cluster's credentials in the
// catalog.
func Grant(packs []*capstan.ScenarioPack, namespace, account string) (string, error) {
	rules := Rules(packs)
	var why []string
	for _, p := range packs {
		for _, r := range p.RBAC {
			why = append(why, fmt.Sprintf("# %s: %s: %s %s on %s", p.Ref(), r.Why, strings.Join(r.Verbs, ","), strings.Join(r.Resources, ","), groups(r.APIGroups)))
		}
	}
	if len(rules) == 0 {
		return "", capstan.Errorf(capstan.EINVALID, "no pack declares rbac: Capstan needs nothing of a cluster")
	}
	name := account + "-runner"
	objects := []any{
		map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}},
		map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": account, "namespace": namespace}},
		rbacv1.ClusterRole{TypeMeta: typeMeta("ClusterRole"), ObjectMeta: objectMeta(name), Rules: rules},
		rbacv1.ClusterRoleBinding{TypeMeta: typeMeta("ClusterRoleBinding"), ObjectMeta: objectMeta(name),
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: account, Namespace: namespace}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name}},
	}
	var b strings.Builder
	b.WriteString("# The identity Capstan acts as on this cluster, and what the packs need of it:\n")
	for _, w := range why {
		b.WriteString(w + "\n")
	}
	for _, o := range objects {
		data, err := yaml.Marshal(o)
		if err != nil {
			return "", err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.String(), nil
}

// Rules are the union of the packs' rbac rules, as RBAC holds them.
func Rules(packs []*capstan.ScenarioPack) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, p := range packs {
		for _, r := range p.RBAC {
			out = append(out, rbacv1.PolicyRule{APIGroups: slices.Clone(r.APIGroups), Resources: slices.Clone(r.Resources), Verbs: slices.Clone(r.Verbs)})
		}
	}
	return out
}

func groups(gs []string) string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g
		if g == "" {
			out[i] = "core"
		}
	}
	return strings.Join(out, ",")
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: kind}
}

func objectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "capstan"}}
}
