package embedded

import (
	"slices"
	"testing"
)

// TestLevelOneHasEveryBucketOfToday: a bucket added to allBuckets needs a
// migration that creates it; until one exists, level 1's list and
// today's are the same.
func TestLevelOneHasEveryBucketOfToday(t *testing.T) {
	for _, b := range allBuckets {
		if !slices.Contains(level1Buckets, string(b)) {
			t.Errorf("bucket %s is created by no migration", b)
		}
	}
}
