package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func sha(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:])
}

// persisted sends an APQ request: the hash, and the document when doc is
// not empty; over GET when get is set.
func persisted(t *testing.T, ts *httptest.Server, get bool, hash, doc string, vars map[string]any) gqlResponse {
	t.Helper()
	return persistedWith(t, ts, adminToken, get, hash, doc, vars)
}

// persistedAs sends a hash (and doc) over POST with token.
func persistedAs(t *testing.T, ts *httptest.Server, token, hash, doc string, vars map[string]any) gqlResponse {
	t.Helper()
	return persistedWith(t, ts, token, false, hash, doc, vars)
}

func persistedWith(t *testing.T, ts *httptest.Server, token string, get bool, hash, doc string, vars map[string]any) gqlResponse {
	t.Helper()
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
	var req *http.Request
	if get {
		q := url.Values{}
		extJSON, _ := json.Marshal(ext)
		q.Set("extensions", string(extJSON))
		if doc != "" {
			q.Set("query", doc)
		}
		if vars != nil {
			v, _ := json.Marshal(vars)
			q.Set("variables", string(v))
		}
		req, _ = http.NewRequest(http.MethodGet, ts.URL+"/graphql?"+q.Encode(), nil)
	} else {
		body := map[string]any{"extensions": ext, "variables": vars}
		if doc != "" {
			body["query"] = doc
		}
		b, _ := json.Marshal(body)
		req, _ = http.NewRequest(http.MethodPost, ts.URL+"/graphql", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out gqlResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	out.status = resp.StatusCode
	return out
}

// TestAutomaticPersistedQueries follows Apollo's APQ protocol over POST
// and GET: a hash alone is not found the first time, the document sent
// with it registers it, and the hash alone is then enough; a wrong pair
// and a malformed extension are refused, typed; a document a limit
// refuses is never kept, and a hash never runs a mutation over GET.
func TestAutomaticPersistedQueries(t *testing.T) {
	ts := startServer(t)
	const doc = `query Cluster($key: String!) { resource(key: $key) { key environment } }`
	vars := map[string]any{"key": "kubernetes.cluster/prod-k8s"}
	for _, overGET := range []bool{false, true} {
		doc := doc + map[bool]string{false: " # post", true: " # get"}[overGET]
		first := persisted(t, ts, overGET, sha(doc), "", vars)
		require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", first.code())
		require.Equal(t, "PersistedQueryNotFound", first.Errors[0].Message, "the message Apollo's clients also look for")
		sent := persisted(t, ts, overGET, sha(doc), doc, vars)
		require.Empty(t, sent.Errors)
		require.Equal(t, "prod", get(sent.Data, "resource", "environment"))
		again := persisted(t, ts, overGET, sha(doc), "", vars)
		require.Empty(t, again.Errors, "the hash alone, once registered")
		require.Equal(t, sent.Data, again.Data)
	}

	wrong := persisted(t, ts, false, sha("{ viewer { actor } }"), doc, vars)
	require.Equal(t, "INVALID", wrong.code())
	require.Equal(t, "PERSISTED_QUERY_HASH_MISMATCH", wrong.Errors[0].Extensions["reason"])
	for _, bad := range []string{"", "xyz", strings.Repeat("g", 64)} {
		r := persisted(t, ts, false, bad, "", nil)
		require.Equal(t, "INVALID", r.code(), "hash %q", bad)
	}

	// A document the cost limit refuses is refused with its hash, and not kept.
	costly := `{ a: resources(first: 500) { edges { node { key relationships { target { relationships { type } } } } } } }`
	refused := persisted(t, ts, false, sha(costly), costly, nil)
	require.Equal(t, "INVALID", refused.code())
	require.Equal(t, "COST_LIMIT", refused.Errors[0].Extensions["reason"])
	require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", persisted(t, ts, false, sha(costly), "", nil).code(), "a refused document takes no room")
	// A kept document is costed on every request: its variables can
	// make it cost more than the limit, and then it is refused as a sent
	// one would be.
	paged := `query Paged($n: Int) { resources(first: $n) { edges { node { key relationships { target { relationships { type } } } } } } }`
	require.Empty(t, persisted(t, ts, false, sha(paged), paged, map[string]any{"n": 2}).Errors)
	overLimit := persisted(t, ts, false, sha(paged), "", map[string]any{"n": 500})
	require.Equal(t, "INVALID", overLimit.code())
	require.Equal(t, "COST_LIMIT", overLimit.Errors[0].Extensions["reason"], "the persisted document's cost, with these variables")
	// Nor is one that does not parse.
	broken := `{ resource(key: "x") { `
	require.Equal(t, "INVALID", persisted(t, ts, false, sha(broken), broken, nil).code())
	require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", persisted(t, ts, false, sha(broken), "", nil).code())

	// A mutation registered over POST does not run by its hash over GET.
	mutation := `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", desiredResult: {name: "apq"}, constraints: {environment: "staging"}}) { id } }`
	require.Empty(t, persisted(t, ts, false, sha(mutation), mutation, nil).Errors)
	overGET := persisted(t, ts, true, sha(mutation), "", nil)
	require.Equal(t, http.StatusMethodNotAllowed, overGET.status)
	require.Equal(t, "INVALID", overGET.code())
}
