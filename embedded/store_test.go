package embedded_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/embedded"
	"github.com/capstan-dev/capstan/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) capstan.Store {
		s, err := embedded.Open(t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestDataDirIsLockedByOneProcess(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(dir)
	require.NoError(t, err)
	defer s.Close()
	_, err = embedded.Open(dir)
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err))
}

func BenchmarkCandidates(b *testing.B) {
	storetest.BenchmarkCandidates(b, func(b *testing.B) capstan.Store {
		s, err := embedded.Open(b.TempDir())
		require.NoError(b, err)
		b.Cleanup(func() { s.Close() })
		return s
	})
}

// BenchmarkCrowdedProvider searches a provider thousands of workloads use.
func BenchmarkCrowdedProvider(b *testing.B) {
	storetest.BenchmarkCrowdedProvider(b, func(b *testing.B) capstan.Store {
		s, err := embedded.Open(b.TempDir())
		require.NoError(b, err)
		b.Cleanup(func() { s.Close() })
		return s
	})
}

// BenchmarkOperationStep is one executor commit of a chain on bbolt.
func BenchmarkOperationStep(b *testing.B) {
	s, err := embedded.Open(b.TempDir())
	require.NoError(b, err)
	b.Cleanup(func() { s.Close() })
	storetest.BenchmarkOperationStep(b, s)
}

func TestUnreadableOperation(t *testing.T) {
	s, err := embedded.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	storetest.UnreadableOperation(t, s, func(t *testing.T, org, id string) {
		require.NoError(t, embedded.DamageOperation(s, org, id))
	})
}

// BenchmarkGraphWalks measures the graph explorer's walks on a catalog of
// CAPSTAN_BENCH_RESOURCES resources (default 1,000,000), beside the floor
// of the same walks over an in-memory adjacency.
func BenchmarkGraphWalks(b *testing.B) {
	s, err := embedded.Open(b.TempDir())
	require.NoError(b, err)
	b.Cleanup(func() { s.Close() })
	g := storetest.LoadGraphCatalog(b, s, 1_000_000)
	storetest.BenchmarkGraphWalks(b, s, g)
	b.Run("floor", func(b *testing.B) { storetest.BenchmarkGraphWalkFloor(b, g) })
}
