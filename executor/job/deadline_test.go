package job_test

import (
	"context"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/internal/deadlinetest"
)

func TestWorkWithinADeadlineEndsWhenItClosesUnmoved(t *testing.T) {
	d := deadlinetest.In(200 * time.Millisecond)
	ctx, cancel := job.WithinDeadline(context.Background(), d)
	defer cancel()
	d.Extend(300 * time.Millisecond) // a renewal: the end moves
	if job.Closed(d) {
		t.Fatal("closed while open")
	}
	<-ctx.Done()
	if !job.Closed(d) {
		t.Fatal("the context ended before its window closed")
	}
	unbounded, stop := job.WithinDeadline(context.Background(), nil)
	stop()
	if unbounded.Err() == nil || job.Closed(nil) {
		t.Fatal("a nil deadline: the context ends with its cancel only, and is never closed")
	}
}
