package capstan_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func object(apiVersion, kind, ns, name string, spec any) map[string]any {
	meta := map[string]any{"name": name}
	if ns != "" {
		meta["namespace"] = ns
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta, "spec": spec}
}

func applied(obj map[string]any) capstan.Evidence {
	return capstan.Evidence{Result: capstan.EvidencePassed, Source: map[string]any{capstan.AppliedSource: obj}}
}

// releaseObj is an object Helm applied for release in ns.
func releaseObj(release, ns, kind, name string) map[string]any {
	o := object("v1", kind, ns, name, nil)
	o["metadata"].(map[string]any)["annotations"] = map[string]any{"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": ns}
	return o
}

// release is a helm step's evidence: all the release's objects.
func release(name, ns string, objs ...map[string]any) capstan.Evidence {
	list := make([]any, len(objs))
	for i, o := range objs {
		list[i] = o
	}
	return capstan.Evidence{Result: capstan.EvidencePassed, Source: map[string]any{"type": "helm", "release": name, "namespace": ns, capstan.AppliedSource: list}}
}

func TestAppliedObjects(t *testing.T) {
	web1 := object("apps/v1", "Deployment", "shop", "web", map[string]any{"replicas": 1})
	web3 := object("apps/v1", "Deployment", "shop", "web", map[string]any{"replicas": 3})
	webBeta := object("apps/v1beta1", "Deployment", "shop", "web", map[string]any{"replicas": 4})
	svc := object("v1", "Service", "shop", "web", nil)
	otherNS := object("apps/v1", "Deployment", "other", "web", nil)
	deleted := capstan.Evidence{Result: capstan.EvidencePassed, Source: map[string]any{"action": "deleted", "api_version": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web"}}
	for _, tc := range []struct {
		name     string
		prev     any
		evidence []capstan.Evidence
		want     []any
	}{
		{"nothing applied", nil, nil, nil},
		{"a first apply", nil, []capstan.Evidence{applied(web1), applied(svc)}, []any{web1, svc}},
		{"a later apply replaces", []any{web1, svc}, []capstan.Evidence{applied(web3)}, []any{web3, svc}},
		{"another version of one object replaces", []any{web1}, []capstan.Evidence{applied(webBeta)}, []any{webBeta}},
		{"another namespace is another object", []any{web1}, []capstan.Evidence{applied(otherNS)}, []any{web1, otherNS}},
		{"a delete takes out", []any{web1, svc}, []capstan.Evidence{deleted}, []any{svc}},
		{"the last delete leaves nil", []any{web1}, []capstan.Evidence{deleted}, nil},
		{"in order: applied after deleted", nil, []capstan.Evidence{deleted, applied(web1)}, []any{web1}},
		{"failed evidence applied nothing", nil, []capstan.Evidence{{Result: capstan.EvidenceFailed, Source: map[string]any{capstan.AppliedSource: web1}}}, nil},
		{"prev of another shape is ignored", "junk", []capstan.Evidence{applied(svc)}, []any{svc}},
		{"a release's objects replace the release's", []any{svc, releaseObj("web", "shop", "Deployment", "web"), releaseObj("web", "shop", "ConfigMap", "old"), releaseObj("api", "shop", "Deployment", "api")},
			[]capstan.Evidence{release("web", "shop", releaseObj("web", "shop", "Deployment", "web"), releaseObj("web", "shop", "Service", "web-svc"))},
			[]any{svc, releaseObj("api", "shop", "Deployment", "api"), releaseObj("web", "shop", "Deployment", "web"), releaseObj("web", "shop", "Service", "web-svc")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var prevCopy []any
			if p, ok := tc.prev.([]any); ok {
				prevCopy = append(prevCopy, p...)
			}
			require.Equal(t, tc.want, capstan.AppliedObjects(tc.prev, tc.evidence))
			if p, ok := tc.prev.([]any); ok {
				require.Equal(t, prevCopy, p, "prev is never changed")
			}
		})
	}
}
