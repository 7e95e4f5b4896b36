package server_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/server"
)

// trustedServer serves the demo with the console's trusted documents in
// mode.
func trustedServer(t *testing.T, mode string) (*httptest.Server, *server.TrustedDocuments) {
	t.Helper()
	trusted, err := server.ConsoleTrustedDocuments(mode)
	require.NoError(t, err)
	require.Greater(t, trusted.Len(), 20, "the console's build lists its operations")
	svc := testenv.Demo(t, testenv.Store(t))
	tokens, err := server.NewTokens([]server.Token{
		{Token: adminToken, Actor: "alice", Organization: testenv.Org, Roles: []string{capstan.RoleAdmin}},
		{Token: viewerToken, Actor: "victor", Organization: testenv.Org, Roles: []string{capstan.RoleViewer}},
	})
	require.NoError(t, err)
	ts := httptest.NewServer(server.Handler(server.Config{Service: svc, Tokens: tokens, TrustedDocuments: trusted, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(ts.Close)
	return ts, trusted
}

// consoleDocument is one of the console's listed documents by name.
func consoleDocument(t *testing.T, name string) (id, body string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("console", "persisted-query-manifest.json"))
	require.NoError(t, err)
	var m struct {
		Operations []struct{ ID, Name, Body string }
	}
	require.NoError(t, json.Unmarshal(raw, &m))
	for _, op := range m.Operations {
		if op.Name == name {
			return op.ID, op.Body
		}
	}
	t.Fatalf("the console lists no %s", name)
	return "", ""
}

// TestTrustedDocumentsEnforced: under enforce a listed document runs by
// id alone or sent whole; an unlisted one from a viewer is FORBIDDEN with
// reason UNTRUSTED_DOCUMENT, before it is parsed (a document that would
// not even parse gets the same answer); an admin's runs (GraphiQL); the
// viewer sees the mode.
func TestTrustedDocumentsEnforced(t *testing.T) {
	ts, trusted := trustedServer(t, server.TrustedEnforce)
	id, body := consoleDocument(t, "Viewer")
	byID := persistedAs(t, ts, viewerToken, id, "", nil)
	require.Empty(t, byID.Errors)
	require.Equal(t, "ENFORCE", get(byID.Data, "viewer", "trustedDocuments"))
	require.Equal(t, "victor", get(byID.Data, "viewer", "actor"))
	whole := post(t, ts, viewerToken, body, nil)
	require.Empty(t, whole.Errors, "a listed document sent whole runs too")

	for _, doc := range []string{`{ viewer { actor } }`, `{ resources(first: 500) { edges { node { key } } } }`, `{{{ not graphql`} {
		r := post(t, ts, viewerToken, doc, nil)
		require.Equal(t, "FORBIDDEN", r.code(), doc)
		require.Equal(t, "UNTRUSTED_DOCUMENT", r.Errors[0].Extensions["reason"], doc)
	}
	unknownID := persistedAs(t, ts, viewerToken, sha(`{ viewer { roles } }`), "", nil)
	require.Equal(t, "FORBIDDEN", unknownID.code(), "an unlisted id is refused, not looked up")
	admin := post(t, ts, adminToken, `{ viewer { actor } }`, nil)
	require.Empty(t, admin.Errors, "an admin keeps GraphiQL")
	require.Equal(t, int64(5), trusted.Unlisted(), "every unlisted document counted, the admin's too")
}

// TestTrustedDocumentsLogged: under log every document runs, and the
// unlisted ones are counted.
func TestTrustedDocumentsLogged(t *testing.T) {
	ts, trusted := trustedServer(t, server.TrustedLog)
	r := post(t, ts, viewerToken, `{ viewer { actor trustedDocuments } }`, nil)
	require.Empty(t, r.Errors)
	require.Equal(t, "LOG", get(r.Data, "viewer", "trustedDocuments"))
	_, body := consoleDocument(t, "Viewer")
	require.Empty(t, post(t, ts, viewerToken, body, nil).Errors)
	require.Equal(t, int64(1), trusted.Unlisted())
}

// TestTrustedDocumentsManifestIsChecked: a manifest whose id is not its
// body's sha256, or of another format, or a mode that is not one, is
// refused at start.
func TestTrustedDocumentsManifestIsChecked(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	good := write("good.json", `{"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id":"`+sha("{ viewer { actor } }")+`","name":"V","type":"query","body":"{ viewer { actor } }"}]}`)
	docs, err := server.LoadTrustedDocuments(good, server.TrustedEnforce)
	require.NoError(t, err)
	require.Equal(t, 1, docs.Len())
	for name, content := range map[string]string{
		"forged.json": `{"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id":"` + sha("{ a }") + `","name":"V","type":"query","body":"{ viewer { actor } }"}]}`,
		"other.json":  `{"format":"something-else","version":1,"operations":[]}`,
		"v2.json":     `{"format":"apollo-persisted-query-manifest","version":2,"operations":[]}`,
		"broken.json": `{"format":`,
	} {
		_, err := server.LoadTrustedDocuments(write(name, content), server.TrustedEnforce)
		require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), name)
	}
	_, err = server.LoadTrustedDocuments(good, "strict")
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	_, err = server.LoadTrustedDocuments(filepath.Join(dir, "missing.json"), server.TrustedLog)
	require.Error(t, err)
}
