package executor

import (
	"context"
	"testing"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
)

// BenchmarkWatchedJob is a job that a watchdog watches (a replica's: its
// shard's window bounded), next to its floor, the same job unwatched (a
// lone process's): the watchdog's cost per job is a bash process and
// a pipe.
func BenchmarkWatchedJob(b *testing.B) {
	for _, c := range []struct {
		name     string
		deadline func() job.Deadline
	}{
		{"unwatched-floor", func() job.Deadline { return nil }},
		{"watched", func() job.Deadline { return windowFor(time.Hour) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir, outputs := b.TempDir(), b.TempDir()
			for b.Loop() {
				res := local.RunScript(context.Background(), nil, job.Job{NodeID: "bench", Spec: capstan.RunSpec{Timeout: "1m"}, Deadline: c.deadline()}, "true", dir, outputs, nil)
				if res.Err != nil {
					b.Fatal(res.Err)
				}
			}
		})
	}
}
