package testenv

import (
	"os"
	"strconv"
)

// BenchResources is a benchmark's catalog size: CAPSTAN_BENCH_RESOURCES
// when set (make test runs every benchmark once at a small size, so none
// rots unseen), else def, the size its target is stated for.
func BenchResources(def int) int {
	if n, err := strconv.Atoi(os.Getenv("CAPSTAN_BENCH_RESOURCES")); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchSmall reports whether benchmarks run at make test's small size:
// what they do untimed first (a warm-up) shrinks with them.
func BenchSmall() bool { return BenchResources(0) > 0 }
