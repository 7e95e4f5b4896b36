package server

import (
	"embed"
	"io/fs"
	"net/http"
)

// The console, built from web/console (`make console`: React, Apollo
// Client and React Flow bundled by Vite) and embedded in the binary: it
// works offline, nothing comes from a CDN. check-generated rebuilds it and
// fails when it is stale. It uses only the public GraphQL API.
//
//go:embed console
var consoleFiles embed.FS

// consoleCSP lets the console load only its own assets and talk only to
// this server (HTTP and its WebSocket).
const consoleCSP = "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// console serves the single-page app at / and its assets under /assets/.
func console() (page, assets http.Handler) {
	root, err := fs.Sub(consoleFiles, "console")
	if err != nil {
		panic(err) // cannot happen: the directory is embedded at build time
	}
	index, err := fs.ReadFile(root, "index.html")
	if err != nil {
		panic(err) // cannot happen: the build writes index.html
	}
	page = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", consoleCSP)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(index)
	})
	files := http.FileServerFS(root)
	assets = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable") // names carry content hashes
		files.ServeHTTP(w, r)
	})
	return page, assets
}
