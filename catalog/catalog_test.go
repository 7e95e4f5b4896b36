package catalog_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/catalog"
)

func TestDemoCatalog(t *testing.T) {
	rs, err := catalog.Parse(catalog.Demo)
	require.NoError(t, err)
	byKey := map[string]*capstan.Resource{}
	for _, r := range rs {
		byKey[r.Key()] = r
	}
	cluster := byKey["kubernetes.cluster/prod-k8s"]
	require.NotNil(t, cluster)
	require.Equal(t, "catalog:clusters", cluster.Source)
	require.Equal(t, "eu-central", cluster.Provides("kubernetes.cluster").Scope["region"])
	require.Len(t, cluster.Relationships, 4)
	shared := byKey["minio.instance/shared-prod-storage"]
	require.Equal(t, []capstan.Relationship{{Type: capstan.RelRunsOn, Target: "kubernetes.cluster/prod-k8s"}}, shared.Relationships)
	require.Equal(t, "shared", shared.Provides("object_storage.s3").Attributes["access_mode"])
	require.Equal(t, capstan.LifecycleDeleted, byKey["minio.instance/old-prod-storage"].LifecycleStatus)
	node := byKey["compute.node/prod-worker-1"]
	require.Equal(t, "debian", node.Provides("linux.host").Attributes["os"])
}

func TestJSONCatalogAndBadInput(t *testing.T) {
	rs, err := catalog.Parse([]byte(`{"clusters": [{"name": "c", "environment": "prod", "region": "eu"}], "external_services": [{"name": "s", "type": "s3.bucket", "environment": "prod", "runs_on": "c"}]}`))
	require.NoError(t, err)
	require.Len(t, rs, 2)
	tests := map[string]string{
		"clusters: [ {name: ":   "not valid YAML",
		"vms: []":               "unknown field",
		"clusters: [{name: 5}]": "catalog",
		"internal_services: [{name: x, environment: p}]":                                                                                                                                                                   "type is empty",
		"clusters: [{name: Bad Name, environment: prod}]":                                                                                                                                                                  "not a valid key",
		"clusters: [{name: c, environment: prod, status: sleeping}]":                                                                                                                                                       "unknown lifecycle status",
		"clusters: [{name: c, environment: prod, api_server: 'https://k8s.example.com'}]":                                                                                                                                  "go together",
		"clusters: [{name: c, environment: prod, api_server: 'http://k8s.example.com', ca: x, credentials: 'secret:t'}]":                                                                                                   "not https",
		"clusters: [{name: c, environment: prod, api_server: 'https://127.0.0.1', ca: x, credentials: 'secret:t'}]":                                                                                                        "loopback",
		"clusters: [{name: c, environment: prod, api_server: 'https://k8s.example.com', ca: x, credentials: 'secret:t'}]":                                                                                                  "ca is not PEM",
		"clusters: [{name: c, environment: prod, api_server: 'https://k8s.example.com', ca: x, credentials: 'a-token'}]":                                                                                                   "and 1 more",
		"external_services: [{name: s, type: s3.bucket, environment: prod, provides: [{capability: object_storage.s3, attributes: {endpoint: 'https://s3.example.com'}}]}]":                                                "go together",
		"external_services: [{name: s, type: s3.bucket, environment: prod, provides: [{capability: object_storage.s3, attributes: {endpoint: 'http://127.0.0.1:9000', access_key: 'secret:a', secret_key: 'secret:b'}}]}]": "loopback",
		"external_services: [{name: s, type: s3.bucket, environment: prod, provides: [{capability: object_storage.s3, attributes: {endpoint: 'https://s3.example.com', access_key: AKIA, secret_key: 'secret:b'}}]}]":      "access_key",
	}
	for doc, want := range tests {
		_, err := catalog.Parse([]byte(doc))
		require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), doc)
		require.Contains(t, err.Error(), want, doc)
	}
	_, err = catalog.Parse(make([]byte, catalog.MaxSize+1))
	require.ErrorContains(t, err, "more than")
}
