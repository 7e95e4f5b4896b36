package server

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// The GraphiQL page and its assets, built from web/graphiql (`make
// graphiql`: GraphiQL 3 and React bundled by esbuild, fonts inlined) and
// embedded in the binary: the page works with no internet, nothing comes
// from a CDN. check-generated rebuilds it and fails when it is stale.
//
//go:embed graphiql
var graphiqlFiles embed.FS

// graphiqlCSP lets the page load only its own assets and talk only to this
// server (HTTP and its WebSocket); fonts and images are inlined data.
const graphiqlCSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"

// graphiql serves the page (at /graphiql) and its assets under
// /graphiql/assets/.
func graphiql() (page, assets http.Handler) {
	return embeddedApp(graphiqlFiles, "graphiql", graphiqlCSP, "/graphiql/", "public, max-age=3600")
}

// embeddedApp serves a page built into the binary (dir of files, its
// index.html under csp) and its assets (paths below prefix, cached as
// assetCache says).
func embeddedApp(files embed.FS, dir, csp, prefix, assetCache string) (page, assets http.Handler) {
	root, err := fs.Sub(files, dir)
	if err != nil {
		panic(err) // cannot happen: the directory is embedded at build time
	}
	index, err := fs.ReadFile(root, "index.html")
	if err != nil {
		panic(err) // cannot happen: the build writes index.html
	}
	page = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(index)
	})
	fileServer := http.StripPrefix(prefix, http.FileServerFS(root))
	assets = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Files only: a directory would be listed.
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Cache-Control", assetCache)
		fileServer.ServeHTTP(w, r)
	})
	return page, assets
}
