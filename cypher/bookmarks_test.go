package cypher_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
)

// TestARoutingURIChainsBookmarks: through a routing URI (neo4j://, as a
// cluster's), the store's sessions share a bookmark manager: after a
// write, every session carries its bookmark, so a read on whichever
// member serves it waits for that write; the operation reads back at
// once. Through bolt:// (one server) they carry none.
func TestARoutingURIChainsBookmarks(t *testing.T) {
	ctx := context.Background()
	routed, err := cypher.Open(cypher.Config{URI: "neo4j://" + strings.TrimPrefix(server.URI, "bolt://"), User: server.User, Password: server.Password})
	require.NoError(t, err)
	t.Cleanup(func() { routed.Close() })
	org := "routed-" + capstan.NewID()[12:]
	op := startedOperation(t, routed, org)
	before := routed.Bookmarks(ctx)
	require.NotEmpty(t, before, "a write leaves its bookmark")
	require.NoError(t, routed.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{{Type: "step", Actor: "executor"}}}))
	require.NotEqual(t, before, routed.Bookmarks(ctx), "each write moves it on")
	got, err := routed.GetOperation(ctx, org, op.ID)
	require.NoError(t, err)
	require.Equal(t, op.Version, got.Version, "the read sees the write")
	require.Nil(t, open(t).Bookmarks(ctx), "bolt:// chains none")
}
