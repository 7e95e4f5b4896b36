// Package resolver holds the hand-written GraphQL resolvers: each decodes
// its arguments, makes one call to the service or store, and encodes the
// result. Generated code lives in graph/.
package resolver

import (
	"log/slog"
	"time"

	"github.com/capstan-dev/capstan/graph/model"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/service"
)

// Resolver is the root resolver.
type Resolver struct {
	Service *service.Service
	// Broker feeds subscriptions; without one they answer UNAVAILABLE.
	Broker *live.Broker
	// ProgressWindow coalesces operationProgress (DefaultProgressWindow).
	ProgressWindow time.Duration
	// Log receives the stacks of panics recovered in the goroutines that
	// serve subscriptions (slog.Default when nil).
	Log *slog.Logger
	// TrustedDocuments is the server's trusted documents mode (OFF when
	// empty), for Viewer.trustedDocuments.
	TrustedDocuments model.TrustedDocumentsMode
}
