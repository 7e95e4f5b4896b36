package server

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Automatic persisted queries (Apollo's APQ protocol): a client sends a
// query's sha256 alone; the first time the server answers
// PERSISTED_QUERY_NOT_FOUND and the client sends it again with the
// document, which the server keeps; from then on the hash is enough.
const (
	// PersistedQueryNotFound is the error code (and message) Apollo's
	// clients look for to send the document.
	PersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"
	// ReasonPersistedHashMismatch names a document whose sha256 is not
	// the hash sent with it.
	ReasonPersistedHashMismatch = "PERSISTED_QUERY_HASH_MISMATCH"
)

// persistedLookup and persistedKeep are the protocol's two gqlgen
// extensions. persistedLookup runs first of all: it puts the document a
// hash names in the request, so every limit (size, tokens, depth, cost)
// sees it as it sees a sent one. persistedKeep runs after the cost
// limit: it keeps a sent document only once it has parsed, validated and
// passed every limit, so one the server refuses takes no room.
type persistedLookup struct{ cache *documentCache }

type persistedKeep struct{ cache *documentCache }

var (
	_ graphql.HandlerExtension          = persistedLookup{}
	_ graphql.OperationParameterMutator = persistedLookup{}
	_ graphql.HandlerExtension          = persistedKeep{}
	_ graphql.OperationContextMutator   = persistedKeep{}
)

const persistedStats = "PersistedQuery"

// persistedRequest is what the parameters said, for the context's turn.
type persistedRequest struct {
	hash string
	sent bool
}

func (persistedLookup) ExtensionName() string                   { return "PersistedQueryLookup" }
func (persistedLookup) Validate(graphql.ExecutableSchema) error { return nil }
func (persistedKeep) ExtensionName() string                     { return "PersistedQueryKeep" }
func (persistedKeep) Validate(graphql.ExecutableSchema) error   { return nil }

func (p persistedLookup) MutateOperationParameters(ctx context.Context, raw *graphql.RawParams) *gqlerror.Error {
	ext, ok := raw.Extensions["persistedQuery"].(map[string]any)
	if raw.Extensions["persistedQuery"] == nil {
		return nil
	}
	hash, _ := ext["sha256Hash"].(string)
	if !ok || !validHash(hash) || !isVersion1(ext["version"]) {
		return limitError(ReasonPersistedHashMismatch, "extensions.persistedQuery must be {version: 1, sha256Hash: <64 hex digits>}")
	}
	sent := raw.Query != ""
	if !sent {
		doc, found := p.cache.get(hash)
		if !found {
			err := gqlerror.Errorf("PersistedQueryNotFound")
			err.Extensions = map[string]any{"code": PersistedQueryNotFound}
			return err
		}
		raw.Query = doc
	} else if sum := sha256.Sum256([]byte(raw.Query)); hex.EncodeToString(sum[:]) != hash {
		return limitError(ReasonPersistedHashMismatch, "the document's sha256 is not extensions.persistedQuery.sha256Hash")
	}
	graphql.GetOperationContext(ctx).Stats.SetExtension(persistedStats, &persistedRequest{hash: hash, sent: sent})
	return nil
}

// MutateOperationContext keeps a sent document that came this far.
func (p persistedKeep) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if r, ok := oc.Stats.GetExtension(persistedStats).(*persistedRequest); ok && r.sent {
		p.cache.add(r.hash, oc.RawQuery)
	}
	return nil
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

func isVersion1(v any) bool {
	switch v := v.(type) {
	case float64:
		return v == 1
	case int64:
		return v == 1
	case int:
		return v == 1
	case interface{ Int64() (int64, error) }:
		n, err := v.Int64()
		return err == nil && n == 1
	}
	return false
}

// documentCache keeps documents by hash, least recently used first out,
// within an entry and a byte bound.
type documentCache struct {
	mu                  sync.Mutex
	order               *list.List // front: most recently used
	byHash              map[string]*list.Element
	bytes               int
	maxEntries, maxSize int
}

type cachedDocument struct{ hash, doc string }

func newDocumentCache(maxEntries, maxBytes int) *documentCache {
	return &documentCache{order: list.New(), byHash: map[string]*list.Element{}, maxEntries: maxEntries, maxSize: maxBytes}
}

func (c *documentCache) get(hash string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byHash[hash]
	if !ok {
		return "", false
	}
	c.order.MoveToFront(e)
	return e.Value.(cachedDocument).doc, true
}

// add keeps doc, then evicts from the back until both bounds hold; a
// document larger than the byte bound is not kept.
func (c *documentCache) add(hash, doc string) {
	size := entrySize(hash, doc)
	if size > c.maxSize {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byHash[hash]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.byHash[hash] = c.order.PushFront(cachedDocument{hash: hash, doc: doc})
	c.bytes += size
	for c.order.Len() > c.maxEntries || c.bytes > c.maxSize {
		last := c.order.Back()
		d := last.Value.(cachedDocument)
		c.order.Remove(last)
		delete(c.byHash, d.hash)
		c.bytes -= entrySize(d.hash, d.doc)
	}
}

// entrySize is what an entry holds: its strings and ~100 bytes of map
// entry, list element and headers.
func entrySize(hash, doc string) int { return len(hash) + len(doc) + 100 }

// stats says how many documents the cache holds, in how many bytes.
func (c *documentCache) stats() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}
