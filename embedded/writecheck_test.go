package embedded

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/capstan-dev/capstan"
)

// TestAWriteBboltWouldRefuseFailsAlone: a key past bbolt's bound, an
// empty key, a value past its bound or a write to a bucket the store does
// not keep fails its own step before it is logged; the store goes on, and
// the data directory opens again (nothing in the log fails its replay).
func TestAWriteBboltWouldRefuseFailsAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, FlushAt(1))
	require.NoError(t, err)
	for name, write := range map[string]writeFunc{
		"long key": func(w *writer) error {
			return w.put(bIntents, bytes.Repeat([]byte("k"), bolt.MaxKeySize+1), []byte("{}"))
		},
		"empty key":      func(w *writer) error { return w.put(bIntents, nil, []byte("{}")) },
		"long delete":    func(w *writer) error { return w.delete(bIntents, bytes.Repeat([]byte("k"), bolt.MaxKeySize+1)) },
		"unknown bucket": func(w *writer) error { return w.put([]byte("nowhere"), []byte("k"), []byte("{}")) },
	} {
		err := s.update(ctx, "test", write)
		require.Error(t, err, name)
		require.NotEqual(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err), "%s: the store goes on", name)
	}
	require.NoError(t, s.update(ctx, "test", func(w *writer) error { return w.put(bIntents, key("acme", "fine"), []byte("{}")) }))
	require.NoError(t, s.Close())
	s, err = Open(dir)
	require.NoError(t, err, "nothing logged fails its replay")
	require.NoError(t, s.Close())
}
