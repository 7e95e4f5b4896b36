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

// consoleManifestPath is the console's trusted documents: every
// operation it sends, in Apollo's persisted query manifest format, as its
// build extracted them (generate-persisted-query-manifest).
const consoleManifestPath = "console/persisted-query-manifest.json"

// ConsoleTrustedDocuments is the console's manifest with a mode: what
// `capstan serve --trusted-documents console` runs with.
func ConsoleTrustedDocuments(mode string) (*TrustedDocuments, error) {
	raw, err := consoleFiles.ReadFile(consoleManifestPath)
	if err != nil {
		return nil, err
	}
	return parseTrustedDocuments("the console's manifest", raw, mode)
}

// consoleManifest serves the manifest to the console, which sends its
// documents by id when the server enforces the list.
func consoleManifest() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := consoleFiles.ReadFile(consoleManifestPath)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(raw)
	})
}

// consoleCSP lets the console load only its own assets and talk only to
// this server (HTTP and its WebSocket).
const consoleCSP = "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// console serves the single-page app at / and its assets under /assets/
// (their names carry content hashes: cached for good).
func console() (page, assets http.Handler) {
	return embeddedApp(consoleFiles, "console", consoleCSP, "/", "public, max-age=31536000, immutable")
}
