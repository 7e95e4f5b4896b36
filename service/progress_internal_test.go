package service

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProgressCacheForgetsWhatNobodyAsksFor: an operation whose last
// viewer left before its end is dropped from the cache after the TTL, so
// the cache does not grow with every operation ever watched.
func TestProgressCacheForgetsWhatNobodyAsksFor(t *testing.T) {
	var c progressCache
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c.byOp, c.at, c.locks = map[string]*Progress{}, map[string]time.Time{}, map[string]*sync.Mutex{}
	c.swept = t0
	c.byOp["org|old"], c.at["org|old"] = &Progress{}, t0
	c.sweep(t0.Add(progressTTL / 2))
	require.Contains(t, c.byOp, "org|old", "not swept before a TTL passed")
	c.byOp["org|new"], c.at["org|new"] = &Progress{}, t0.Add(progressTTL)
	c.sweep(t0.Add(progressTTL + time.Second))
	require.NotContains(t, c.byOp, "org|old")
	require.NotContains(t, c.at, "org|old")
	require.Contains(t, c.byOp, "org|new", "a recent one stays")
}
