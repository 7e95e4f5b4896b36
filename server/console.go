package server

import (
	"embed"
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

// console serves the single-page app at / and its assets under /assets/
// (their names carry content hashes: cached for good).
func console() (page, assets http.Handler) {
	return embeddedApp(consoleFiles, "console", consoleCSP, "/", "public, max-age=31536000, immutable")
}
