package server_test

import (
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGraphiQLIsServedFromTheBinary: the page at /graphiql loads
// only this server's own assets (no CDN: it works offline), and the
// assets are served from the binary.
func TestGraphiQLIsServedFromTheBinary(t *testing.T) {
	ts := startServer(t)
	fetch := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(body)
	}
	for _, path := range []string{"/graphiql"} {
		resp, page := fetch(path)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.Contains(t, resp.Header.Get("Content-Type"), "text/html")
		require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'self'")
		require.Contains(t, page, `src="/graphiql/assets/graphiql.js"`)
		require.NotRegexp(t, regexp.MustCompile(`(src|href)="(https?:)?//`), page, "nothing is loaded from another host")
	}
	for path, typ := range map[string]string{"/graphiql/assets/graphiql.js": "javascript", "/graphiql/assets/graphiql.css": "text/css"} {
		resp, body := fetch(path)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.Contains(t, resp.Header.Get("Content-Type"), typ)
		require.Greater(t, len(body), 10_000, path)
	}
	_, css := fetch("/graphiql/assets/graphiql.css")
	require.NotRegexp(t, regexp.MustCompile(`url\((["']?)https?:|@import`), css, "fonts and images are inlined")
	resp, _ := fetch("/graphiql/assets/../../go.mod")
	require.NotEqual(t, http.StatusOK, resp.StatusCode)
	resp, _ = fetch("/graphiql/assets/nothing.js")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// TestConsoleIsServedFromTheBinary: the console at / loads only this
// server's own assets (no CDN), with a CSP that lets it talk only to this
// server.
func TestConsoleIsServedFromTheBinary(t *testing.T) {
	ts := startServer(t)
	resp, err := http.Get(ts.URL + "/")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "connect-src 'self'")
	require.Contains(t, string(page), `<div id="root">`)
	require.NotRegexp(t, regexp.MustCompile(`(src|href)="(https?:)?//`), string(page), "nothing is loaded from another host")
	scripts := regexp.MustCompile(`src="(/assets/[^"]+\.js)"`).FindStringSubmatch(string(page))
	require.NotNil(t, scripts, "%s", page)
	resp, err = http.Get(ts.URL + scripts[1])
	require.NoError(t, err)
	js, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "javascript")
	require.Contains(t, string(js), "OperationsLive", "the bundle carries the console's own GraphQL documents")
	resp, err = http.Get(ts.URL + "/assets/../../go.mod")
	require.NoError(t, err)
	resp.Body.Close()
	require.NotEqual(t, http.StatusOK, resp.StatusCode)
	resp, err = http.Get(ts.URL + "/assets/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "no directory listing")
}
