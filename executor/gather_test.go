package executor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gatherLoop is a loop with busy results on their way from fake workers
// and queued work handed to a fake pool; the group-commit waits are long
// so every case below ends by its rule, never by a timer.
func gatherLoop(perOperation int) (*loop, chan func()) {
	tasks := make(chan func())
	e := &Executor{cfg: Config{PerOperation: perOperation}, tasks: tasks}
	l := newLoop(e, "org", "op")
	l.gatherIdle, l.gatherMax = time.Hour, time.Hour
	return l, tasks
}

// report sends a result as a worker does once its attempt ends.
func report(l *loop, node string) {
	go func() { l.results <- nodeResult{node: node} }()
}

func TestGatherReturnsAtOnceWhenNothingElseIsOut(t *testing.T) {
	l, _ := gatherLoop(4)
	l.inflight["a"], l.busy = true, 1
	rs := l.gather(context.Background(), nodeResult{node: "a"})
	require.Len(t, rs, 1, "a chain's next node must not wait for a group commit")
	require.Zero(t, l.busy)
	require.Empty(t, l.inflight)
}

func TestGatherTakesEveryResultOfWorkAlreadyOut(t *testing.T) {
	l, _ := gatherLoop(4)
	for i := range 4 {
		l.inflight[fmt.Sprint(i)] = true
	}
	l.busy = 4
	for i := 1; i < 4; i++ {
		report(l, fmt.Sprint(i))
	}
	rs := l.gather(context.Background(), nodeResult{node: "0"})
	require.Len(t, rs, 4)
	require.Zero(t, l.busy)
	require.Empty(t, l.inflight)
}

func TestGatherHandsOutQueuedWorkWithinTheOperationLimit(t *testing.T) {
	l, tasks := gatherLoop(2)
	l.busy = 1
	for i := range 5 {
		node := fmt.Sprint("q", i)
		l.inflight[node] = true
		l.queue = append(l.queue, queued{node: node, task: func() { report(l, node) }})
	}
	go func() { // the pool: runs what it is handed
		for task := range tasks {
			task()
		}
	}()
	defer close(tasks)
	rs := l.gather(context.Background(), nodeResult{node: "first"})
	require.Len(t, rs, 6, "the first result and every queued node's")
	require.Empty(t, l.queue)
	require.Zero(t, l.busy)
}

func TestGatherStopsForAnOutsideChange(t *testing.T) {
	l, _ := gatherLoop(4)
	l.busy = 2 // another result is still out, and stays out
	l.wakeFor(outsideChange)
	rs := l.gather(context.Background(), nodeResult{node: "a"})
	require.Len(t, rs, 1)
	require.True(t, l.dirty, "the loop decides on the change next")
}

func TestGatherStopsAtTheBatchBound(t *testing.T) {
	l, _ := gatherLoop(gatherBatch + 10)
	l.busy = gatherBatch + 10
	for i := 1; i < gatherBatch+10; i++ {
		report(l, fmt.Sprint(i))
	}
	rs := l.gather(context.Background(), nodeResult{node: "0"})
	require.Len(t, rs, gatherBatch)
	require.Equal(t, 10, l.busy)
	for range 10 { // let the rest report
		<-l.results
	}
}

func TestGatherWaitsNoLongerThanItsBound(t *testing.T) {
	l, _ := gatherLoop(4)
	l.gatherIdle, l.gatherMax = 10*time.Millisecond, 10*time.Millisecond
	l.busy = 2 // the other result never comes
	rs := l.gather(context.Background(), nodeResult{node: "a"})
	require.Len(t, rs, 1)
	require.Equal(t, 1, l.busy)
}
