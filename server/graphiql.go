package server

import (
	"embed"
	"io/fs"
	"net/http"
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

// graphiql serves the page (at / and /graphiql) and its assets under
// /graphiql/assets/.
func graphiql() (page, assets http.Handler) {
	root, err := fs.Sub(graphiqlFiles, "graphiql")
	if err != nil {
		panic(err) // cannot happen: the directory is embedded at build time
	}
	index, err := fs.ReadFile(root, "index.html")
	if err != nil {
		panic(err) // cannot happen: the build writes index.html
	}
	page = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", graphiqlCSP)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(index)
	})
	files := http.StripPrefix("/graphiql/", http.FileServerFS(root))
	assets = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
	return page, assets
}
