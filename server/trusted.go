package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/graph/model"
)

// Trusted documents (Apollo's persisted query lists): the operations a
// client ships, listed at its build in a manifest, and a mode saying what
// the server does with a document the list does not hold.
const (
	TrustedOff     = "off"     // every document runs
	TrustedLog     = "log"     // every document runs; unlisted ones are counted and logged
	TrustedEnforce = "enforce" // only listed documents run, but for admins (GraphiQL)
	// ReasonUntrustedDocument is the reason of a refused document.
	ReasonUntrustedDocument = "UNTRUSTED_DOCUMENT"
	// manifestFormat is Apollo's persisted query manifest's format.
	manifestFormat = "apollo-persisted-query-manifest"
)

// TrustedDocuments is a loaded manifest and its mode.
type TrustedDocuments struct {
	Mode string
	// byID maps a document's id (the sha256 of its body) to its body.
	byID map[string]string
	// unknown counts unlisted documents; logged remembers (boundedly)
	// which were logged, so a flood of one is one line.
	unlisted atomic.Int64
	mu       sync.Mutex
	logged   map[string]bool
}

// maxLoggedUnknown bounds the unlisted documents logged one by one.
const maxLoggedUnknown = 1000

// LoadTrustedDocuments reads an Apollo persisted query manifest (format
// apollo-persisted-query-manifest, version 1): every id must be its
// body's sha256.
func LoadTrustedDocuments(path, mode string) (*TrustedDocuments, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "trusted documents: %v", err)
	}
	return parseTrustedDocuments(path, raw, mode)
}

// parseTrustedDocuments reads a manifest (named where, for errors).
func parseTrustedDocuments(path string, raw []byte, mode string) (*TrustedDocuments, error) {
	switch mode {
	case TrustedOff, TrustedLog, TrustedEnforce:
	default:
		return nil, capstan.Errorf(capstan.EINVALID, "trusted documents mode %q is not off, log or enforce", mode)
	}
	var m struct {
		Format     string `json:"format"`
		Version    int    `json:"version"`
		Operations []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
			Body string `json:"body"`
		} `json:"operations"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "trusted documents %s: %v", path, err)
	}
	if m.Format != manifestFormat || m.Version != 1 {
		return nil, capstan.Errorf(capstan.EINVALID, "trusted documents %s: format %q version %d, not %s version 1", path, m.Format, m.Version, manifestFormat)
	}
	t := &TrustedDocuments{Mode: mode, byID: make(map[string]string, len(m.Operations)), logged: map[string]bool{}}
	for i, op := range m.Operations {
		if sum := sha256.Sum256([]byte(op.Body)); hex.EncodeToString(sum[:]) != op.ID {
			return nil, capstan.Errorf(capstan.EINVALID, "trusted documents %s: operation %d (%s): its id is not its body's sha256", path, i, op.Name)
		}
		t.byID[op.ID] = op.Body
	}
	return t, nil
}

// mode is the mode as the API shows it (OFF without a list).
func (t *TrustedDocuments) mode() model.TrustedDocumentsMode {
	if t == nil {
		return model.TrustedDocumentsModeOff
	}
	return model.TrustedDocumentsMode(strings.ToUpper(t.Mode))
}

// Len is how many documents the manifest lists.
func (t *TrustedDocuments) Len() int { return len(t.byID) }

// Unlisted is how many documents the list did not hold were received.
func (t *TrustedDocuments) Unlisted() int64 { return t.unlisted.Load() }

// Collector is Unlisted for /metrics.
func (t *TrustedDocuments) Collector() prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "capstan_untrusted_documents_total",
		Help: "GraphQL documents received that the trusted documents list does not hold."}, func() float64 { return float64(t.Unlisted()) })
}

// trustedLookup is the gqlgen extension: it runs before any other, so an
// unlisted document is refused (enforce) before it is parsed. A listed
// document sent by id alone (extensions.persistedQuery.sha256Hash, as
// Apollo's persisted query link sends it) is filled in from the list.
type trustedLookup struct {
	docs *TrustedDocuments
	log  *slog.Logger
}

var (
	_ graphql.HandlerExtension          = trustedLookup{}
	_ graphql.OperationParameterMutator = trustedLookup{}
)

func (trustedLookup) ExtensionName() string                   { return "TrustedDocuments" }
func (trustedLookup) Validate(graphql.ExecutableSchema) error { return nil }

func (l trustedLookup) MutateOperationParameters(ctx context.Context, raw *graphql.RawParams) *gqlerror.Error {
	t := l.docs
	if t == nil || t.Mode == TrustedOff {
		return nil
	}
	id := documentID(raw)
	if body, ok := t.byID[id]; ok {
		if raw.Query == "" {
			raw.Query = body // the id alone names a listed document
		}
		return nil
	}
	if t.Mode == TrustedLog || isAdmin(ctx) {
		t.unlisted.Add(1)
		t.logOnce(l.log, id, raw.OperationName)
		return nil
	}
	t.unlisted.Add(1)
	err := gqlerror.Errorf("this server runs only the documents its trusted documents list holds; %s is not one of them", describeDocument(id, raw.OperationName))
	err.Extensions = map[string]any{"code": capstan.EFORBIDDEN, "reason": ReasonUntrustedDocument}
	return err
}

// documentID is the sha256 a request names (persisted query) or of the
// document it sends.
func documentID(raw *graphql.RawParams) string {
	if raw.Query == "" {
		if ext, ok := raw.Extensions["persistedQuery"].(map[string]any); ok {
			if h, ok := ext["sha256Hash"].(string); ok {
				return h
			}
		}
		return ""
	}
	sum := sha256.Sum256([]byte(raw.Query))
	return hex.EncodeToString(sum[:])
}

func describeDocument(id, name string) string {
	if len(id) > 64 {
		id = id[:64]
	}
	if name == "" {
		return fmt.Sprintf("document %s", id)
	}
	if len(name) > 100 {
		name = name[:100]
	}
	return fmt.Sprintf("document %s (%q)", id, name)
}

func (t *TrustedDocuments) logOnce(log *slog.Logger, id, name string) {
	t.mu.Lock()
	first := !t.logged[id] && len(t.logged) < maxLoggedUnknown
	if first {
		t.logged[id] = true
	}
	t.mu.Unlock()
	if first && log != nil {
		log.Warn("a document the trusted documents list does not hold", "document", describeDocument(id, name), "mode", t.Mode)
	}
}

func isAdmin(ctx context.Context) bool {
	a, err := capstan.ActorFrom(ctx)
	return err == nil && a.HasRole(capstan.RoleAdmin)
}
