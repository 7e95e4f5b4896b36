// Package gctune sets the Go garbage collector the way a Capstan server
// runs it.
//
// A server's live heap is small (tens of megabytes: caches, the running
// operations' state, the live feed's window) while it allocates fast
// (every step is encoded to JSON and decoded again by its readers). At
// Go's default GOGC of 100 the collector then runs every few megabytes
// of allocation: measured on 100 operations of 100 no-op jobs, 16% of
// the process's CPU, and GOGC 400 took the CPU a job from 177 to 123 µs
// (BenchmarkManyOperations/embedded-tmpfs/100x100, 2026-12-07). The
// price is a heap that may grow to five times the live one before a
// collection; GOMEMLIMIT bounds it where memory is tight.
package gctune

import (
	"os"
	"runtime/debug"
)

// Percent is the server's GOGC when its environment sets none.
const Percent = 400

// Apply sets GOGC to Percent unless the environment sets GOGC, and
// returns the GOGC in force before (for a benchmark to put back).
func Apply() (before int) {
	if _, set := os.LookupEnv("GOGC"); set {
		before = debug.SetGCPercent(100)
		debug.SetGCPercent(before) // read, not changed: the operator's choice stands
		return before
	}
	return debug.SetGCPercent(Percent)
}
