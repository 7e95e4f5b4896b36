package server

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocumentCacheBounds pushes past both bounds: the least recently
// used document goes first, a read counts as a use, and a document larger
// than the byte bound is not kept.
func TestDocumentCacheBounds(t *testing.T) {
	c := newDocumentCache(3, 1000)
	for i := range 3 {
		c.add(fmt.Sprint(i), "doc")
	}
	_, ok := c.get("0") // 0 is now the most recently used
	require.True(t, ok)
	c.add("3", "doc")
	_, ok = c.get("1")
	require.False(t, ok, "past the entry bound, the least recently used went")
	for _, h := range []string{"0", "2", "3"} {
		_, ok := c.get(h)
		require.True(t, ok, h)
	}
	entries, bytes := c.stats()
	require.Equal(t, 3, entries)
	require.Equal(t, 3*entrySize("0", "doc"), bytes)

	c.add("big", strings.Repeat("x", 700)) // past the byte bound: the two least recently used go
	entries, bytes = c.stats()
	require.Equal(t, 2, entries)
	require.LessOrEqual(t, bytes, 1000)
	_, ok = c.get("3")
	require.True(t, ok, "the most recently used stays")
	c.add("huge", strings.Repeat("x", 1000))
	_, ok = c.get("huge")
	require.False(t, ok, "larger than the bound: not kept")
	_, ok = c.get("big")
	require.True(t, ok, "and it evicted nothing")
}

// BenchmarkPersistedCacheAtBound fills the cache to its default bounds
// with 2 KB documents and reports the heap it holds, beside the bytes it
// counts (the floor: the documents' own bytes).
func BenchmarkPersistedCacheAtBound(b *testing.B) {
	doc := "query Q { " + strings.Repeat("resource(key: \"x\") { key } ", 70) + "}" // ~2 KB
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c := newDocumentCache(DefaultLimits.PersistedQueries, DefaultLimits.PersistedBytes)
		for i := 0; i < 2*DefaultLimits.PersistedQueries; i++ {
			c.add(fmt.Sprintf("%064d", i), fmt.Sprintf("%s #%d", doc, i))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		entries, counted := c.stats()
		b.ReportMetric(float64(entries), "entries")
		b.ReportMetric(float64(counted)/(1<<20), "counted-MiB")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MiB")
		runtime.KeepAlive(c)
	}
}
