package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestResourceBoundBy lists the plans that bind a resource as a provider:
// newest first, bounded by first, never another organization's.
func TestResourceBoundBy(t *testing.T) {
	ts := startServer(t)
	var plans []any
	for range 2 {
		created := post(t, ts, adminToken, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", scenario: "minio.install@1.0.0", desiredResult: {name: "bound"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, nil)
		require.Empty(t, created.Errors)
		planned := post(t, ts, adminToken, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id bindings { key provider { resourceKey } } } }`, map[string]any{"id": get(created.Data, "createIntent", "id")})
		require.Empty(t, planned.Errors)
		plans = append(plans, get(planned.Data, "planIntent", "id"))
	}
	const q = `query($n: Int) { resource(key: "kubernetes.cluster/prod-k8s") { boundBy(first: $n) { plan { id } binding { key provider { resourceKey } } } } }`
	r := post(t, ts, adminToken, q, nil)
	require.Empty(t, r.Errors)
	bound := get(r.Data, "resource", "boundBy").([]any)
	require.Len(t, bound, 2)
	require.Equal(t, plans[1], get(bound[0], "plan", "id"), "newest plan first")
	require.Equal(t, plans[0], get(bound[1], "plan", "id"))
	require.Equal(t, "kubernetes.cluster/prod-k8s", get(bound[0], "binding", "provider", "resourceKey"))
	one := post(t, ts, adminToken, q, map[string]any{"n": 1})
	require.Len(t, get(one.Data, "resource", "boundBy").([]any), 1)
	dflt := post(t, ts, adminToken, `{ resource(key: "kubernetes.cluster/prod-k8s") { boundBy(first: null) { plan { id } } } }`, nil)
	require.Len(t, get(dflt.Data, "resource", "boundBy").([]any), 2, "an explicit null takes the default")
	bad := post(t, ts, adminToken, q, map[string]any{"n": 101})
	require.Equal(t, "INVALID", bad.code())
	other := post(t, ts, otherToken, `{ resource(key: "kubernetes.cluster/other-k8s") { boundBy { plan { id } } } }`, nil)
	require.Empty(t, other.Errors)
	require.Empty(t, get(other.Data, "resource", "boundBy"), "another organization's plans never show")
}
