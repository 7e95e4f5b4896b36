package job_test

import (
	"context"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/internal/kubetest"
	"github.com/capstan-dev/capstan/secret"
)

// secrets is a secret store holding one token.
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
	return nil, nil
}

func TestAStoreTargetIsReadFromItsCapability(t *testing.T) {
	s3 := func(attrs map[string]any) *capstan.Resource {
		return &capstan.Resource{Type: "s3.bucket", Name: "traces", ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: capstan.ObjectStorageS3, Attributes: attrs}}}
	}
	store := secrets{"s3-access": "AKIATEST", "s3-secret": "the-secret-key"}
	tg, err := job.TargetOf(context.Background(), store, "acme", "object-storage",
		s3(map[string]any{"endpoint": "https://s3.example.com", "access_key": "secret:s3-access", "secret_key": "secret:s3-secret", "encryption": "required"}))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Store == nil || tg.Store.Endpoint != "https://s3.example.com" || string(tg.Store.AccessKey) != "AKIATEST" || string(tg.Store.SecretKey) != "the-secret-key" || tg.IsHost() {
		t.Fatalf("target = %+v %+v", tg, tg.Store)
	}
	if _, err := job.TargetOf(context.Background(), store, "acme", "object-storage",
		s3(map[string]any{"endpoint": "https://s3.example.com", "access_key": "secret:s3-access", "secret_key": "secret:nope"})); err == nil || !strings.Contains(err.Error(), "no secret nope") {
		t.Fatalf("a missing key: %v", err)
	}
	if _, err := job.TargetOf(context.Background(), store, "acme", "object-storage",
		s3(map[string]any{"encryption": "required"})); err == nil || !strings.Contains(err.Error(), "provides neither") {
		t.Fatalf("a store no step reaches: %v", err)
	}
}

func TestAClusterTargetIsReadFromItsCapability(t *testing.T) {
	ca := string(kubetest.OtherCA(t))
	cluster := func(attrs map[string]any) *capstan.Resource {
		return &capstan.Resource{Type: "kubernetes.cluster", Name: "prod-k8s",
			ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: capstan.KubernetesCluster, Attributes: attrs}}}
	}
	good := map[string]any{"api_server": "https://k8s.example.com:6443", "ca": ca, "credentials": "secret:prod-k8s-token"}
	with := func(k string, v any) map[string]any {
		out := map[string]any{}
		for key, val := range good {
			out[key] = val
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	store := secrets{"prod-k8s-token": "  the-token\n"}
	tg, err := job.TargetOf(context.Background(), store, "acme", "cluster", cluster(good))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Cluster == nil || tg.Cluster.Server != "https://k8s.example.com:6443" || string(tg.Cluster.Token) != "the-token" || string(tg.Cluster.CA) != strings.TrimSpace(ca) {
		t.Fatalf("target = %+v %+v", tg, tg.Cluster)
	}
	if tg.String() != "kubernetes.cluster/prod-k8s (https://k8s.example.com:6443)" {
		t.Fatalf("String = %s", tg)
	}
	for name, tc := range map[string]struct {
		r    *capstan.Resource
		want string
	}{
		"no api_server":         {cluster(with("api_server", nil)), "api_server is empty"},
		"plain http":            {cluster(with("api_server", "http://k8s.example.com")), "not https"},
		"a path":                {cluster(with("api_server", "https://k8s.example.com/x")), "nothing more"},
		"no ca":                 {cluster(with("ca", nil)), "ca is not PEM"},
		"credentials inline":    {cluster(with("credentials", "the-token")), "not a secret: reference"},
		"a missing secret":      {cluster(with("credentials", "secret:nope")), "no secret nope"},
		"neither host nor apis": {&capstan.Resource{Type: "s3.bucket", Name: "b"}, "provides neither"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := job.TargetOf(context.Background(), store, "acme", "cluster", tc.r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
