package artifact

import (
	"context"
	"io"
	"strings"
)

// Stores keeps new artifacts in one store and reads each reference from
// the store that made it: an artifact kept on this replica's disk before
// the server moved to an object store is still read here.
type Stores struct {
	// Keep keeps new artifacts (an *S3 for replicas; the Dir alone).
	Keep Store
	// Local is the server's directory, for file: references.
	Local Dir
}

// Put keeps the object in Keep.
func (s Stores) Put(ctx context.Context, key string, r io.Reader, size int64) (string, error) {
	return s.Keep.Put(ctx, key, r, size)
}

// Open reads a file: reference from Local, any other from Keep.
func (s Stores) Open(ctx context.Context, ref string, from, to int64) (io.ReadCloser, error) {
	if strings.HasPrefix(ref, "file:") {
		return s.Local.Open(ctx, ref, from, to)
	}
	return s.Keep.Open(ctx, ref, from, to)
}

// Shared is Keep's.
func (s Stores) Shared() bool { return s.Keep.Shared() }
