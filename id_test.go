package capstan

import (
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIDClockOnlyGrows(t *testing.T) {
	var c idClock
	ms1, r1 := c.next(1000)
	require.Equal(t, int64(1000), ms1)
	ms2, r2 := c.next(1000) // same millisecond: counts up
	require.Equal(t, int64(1000), ms2)
	require.Equal(t, r1+1, r2)
	ms3, r3 := c.next(999) // the clock went back: still after the last
	require.Equal(t, int64(1000), ms3)
	require.Equal(t, r2+1, r3)
	ms4, _ := c.next(1001) // the clock moved on: a new millisecond
	require.Equal(t, int64(1001), ms4)
	c.random = ^uint64(0) // the last sequence of a millisecond: borrow the next
	ms5, r5 := c.next(1001)
	require.Equal(t, int64(1002), ms5)
	require.Zero(t, r5)
}

func TestNewIDsSortInTheOrderTheyWereMade(t *testing.T) {
	ids := make([]string, 100_000)
	for i := range ids {
		ids[i] = NewID()
		require.Len(t, ids[i], 28)
		if i > 0 {
			require.Less(t, ids[i-1], ids[i], "made one after the other, within a millisecond too")
		}
	}
	// Concurrent callers get distinct identifiers.
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]string, 10_000)
			for i := range local {
				local[i] = NewID()
			}
			require.True(t, sort.StringsAreSorted(local))
			mu.Lock()
			defer mu.Unlock()
			for _, id := range local {
				require.False(t, seen[id], "duplicate %s", id)
				seen[id] = true
			}
		}()
	}
	wg.Wait()
}
