package executor

import (
	"time"

	"github.com/capstan-dev/capstan/executor/shard"
)

// windowFor is a shard's window on the real clock, open for d.
func windowFor(d time.Duration) *shard.Window {
	w := shard.NewWindow(realClock{}, true)
	w.Extend(time.Now().Add(d))
	return w
}
