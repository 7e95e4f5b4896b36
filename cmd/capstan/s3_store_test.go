package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/s3test"
)

// bucketPack makes a bucket on the object store its requirement binds,
// and proves it writable.
const bucketPack = `id: buckets
version: 1.0.0
resource_types:
  - {key: s3.bucket.made, display_name: Bucket, allowed_actions: [create]}
scenarios:
  - id: s3.bucket.made.create
    action: create
    target_resource_type: s3.bucket.made
    editable_parameters: [bucket]
    requires:
      - {id: object-storage, capability: object_storage.s3, strategy: existing, constraints: {environment: "${intent.environment}"}}
    plan:
      nodes:
        - id: create-bucket
          type: job
          title: Make the bucket
          requires: [object-storage]
          job:
            inputs: {parameters: {bucket: traces}}
            run: {runner: s3, target: object-storage, bucket: '${param.bucket}', timeout: 30s}
            outputs:
              evidence:
                - {name: bucket-writable, type: s3, target: object-storage, bucket: '${param.bucket}'}
            controls: {idempotent: true, retry: {maximum_attempts: 2}}
`

// TestABucketIsMadeOnARealStoreThroughTheAPI is the s3 runner and probe
// through the API, on both stores: the catalog registers a real S3
// server (versitygw on loopback) with its keys as secret references; an
// operation makes a bucket on it and proves it writable by a PUT, a GET
// and a DELETE; the evidence names the endpoint, the bucket and the key.
func TestABucketIsMadeOnARealStoreThroughTheAPI(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	packs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(packs, "buckets.yaml"), []byte(bucketPack), 0o600))
	for store, args := range bothStores(t, "--egress-allow", "127.0.0.1/32", "--packs", packs) {
		t.Run(store, func(t *testing.T) {
			dir := t.TempDir()
			tokens := tokensFile(t, dir, "alice acme admin "+kubeAdmin)
			p := start(t, dir, append([]string{"--tokens", tokens}, args...)...)
			ok := func(q string, vars map[string]any) map[string]any {
				t.Helper()
				r := postAs(t, p, kubeAdmin, q, vars)
				require.Empty(t, r.Errors, "%v", r.Errors)
				return r.Data
			}
			env := "lab-" + store
			for name, v := range map[string]string{"s3-access": s3test.AccessKey, "s3-secret": s3test.SecretKey} {
				ok(`mutation($n: String!, $v: String!) { putSecret(input: {name: $n, value: $v}) { name } }`, map[string]any{"n": name, "v": v})
			}
			doc := fmt.Sprintf("organization: acme\nenvironments: [%s]\nexternal_services:\n  - {name: lab-s3, type: s3.store, environment: %s, health: healthy, provides: [{capability: object_storage.s3, attributes: {endpoint: %q, access_key: 'secret:s3-access', secret_key: 'secret:s3-secret'}}]}\n",
				env, env, srv.Endpoint)
			ok(`mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": doc})
			bucket := "traces-" + store
			intent := ok(`mutation($e: String!) { createIntent(input: {action: "create", targetResourceType: "s3.bucket.made", desiredResult: {name: "traces"}, constraints: {environment: $e}}) { id } }`,
				map[string]any{"e": env})["createIntent"].(map[string]any)["id"]
			plan := ok(`mutation($id: ID!) { planIntent(input: {intent: $id}) { id status version problems } }`, map[string]any{"id": intent})["planIntent"].(map[string]any)
			require.Equal(t, "READY", plan["status"], "%v", plan)
			ok(`mutation($p: ID!, $v: Int!, $params: Map!) { editPlan(input: {plan: $p, version: $v, changes: [{op: SET_PARAMETERS, node: "create-bucket", parameters: $params}]}) { id } }`,
				map[string]any{"p": plan["id"], "v": plan["version"], "params": map[string]any{"bucket": bucket}})
			op := ok(`mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
			waitForEndAs(t, p, kubeAdmin, op)
			got := ok(`query($id: ID!) { operation(id: $id) { status nodeRuns { node status error } evidence { item result source } } }`, map[string]any{"id": op})["operation"].(map[string]any)
			require.Equal(t, "SUCCEEDED", got["status"], "%v", got)
			evidence := map[string]map[string]any{}
			for _, e := range got["evidence"].([]any) {
				e := e.(map[string]any)
				evidence[e["item"].(string)] = e
			}
			require.Equal(t, "PASSED", evidence["bucket-"+bucket+"-created"]["result"], "%v", evidence)
			writable := evidence["bucket-writable"]
			require.Equal(t, "PASSED", writable["result"], "%v", evidence)
			source := writable["source"].(map[string]any)
			require.Equal(t, srv.Endpoint, source["endpoint"])
			require.Equal(t, bucket, source["bucket"])
			require.Equal(t, true, source["read_back"])
			require.Equal(t, true, source["deleted"])
			info, err := os.Stat(filepath.Join(srv.Root, bucket))
			require.NoError(t, err, "the bucket is on the server")
			require.True(t, info.IsDir())
		})
	}
}
