package executor_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/shard"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/secret"
)

// manualClock is a clock the test moves: Advance moves its time without
// firing anything (a stalled process does not see its timers), Fire then
// fires every timer that is due.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []manualTimer
	added  chan struct{} // a timer was added
}

type manualTimer struct {
	at time.Time
	ch chan time.Time
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC), added: make(chan struct{}, 64)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.timers = append(c.timers, manualTimer{at: c.now.Add(d), ch: ch})
	c.added <- struct{}{}
	return ch
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// next waits for a timer and returns the earliest one's time.
func (c *manualClock) next(t *testing.T) time.Time {
	for {
		c.mu.Lock()
		if len(c.timers) > 0 {
			at := slices.MinFunc(c.timers, func(a, b manualTimer) int { return a.at.Compare(b.at) }).at
			c.mu.Unlock()
			return at
		}
		c.mu.Unlock()
		select {
		case <-c.added:
		case <-time.After(30 * time.Second):
			t.Fatal("no timer was set")
		}
	}
}

// Fire fires the timers that are due.
func (c *manualClock) Fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.timers[:0]
	for _, tm := range c.timers {
		if tm.at.After(c.now) {
			kept = append(kept, tm)
			continue
		}
		tm.ch <- c.now
	}
	c.timers = kept
}

// memLease is a database's leases in memory, on the test's clock: a
// lease is free once it ran out by that clock, and a grant to another
// holder is a new token.
type memLease struct {
	clock   *manualClock
	mu      sync.Mutex
	down    bool
	leases  map[string]capstan.LeaseHolder
	members map[string]time.Time
	tried   chan struct{} // every renewal's first call
}

func newMemLease(clock *manualClock) *memLease {
	return &memLease{clock: clock, leases: map[string]capstan.LeaseHolder{}, members: map[string]time.Time{}, tried: make(chan struct{}, 64)}
}

func (l *memLease) setDown(down bool) { l.mu.Lock(); l.down = down; l.mu.Unlock() }

func (l *memLease) JoinExecutors(ctx context.Context, holder string, ttl time.Duration) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tried <- struct{}{}
	if l.down {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "the database cannot be reached")
	}
	now := l.clock.Now()
	l.members[holder] = now.Add(ttl)
	var out []string
	for m, until := range l.members {
		if !until.Before(now) {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (l *memLease) ExecutorLeases(ctx context.Context) ([]capstan.LeaseHolder, time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return nil, time.Time{}, capstan.Errorf(capstan.EUNAVAILABLE, "the database cannot be reached")
	}
	var out []capstan.LeaseHolder
	for _, h := range l.leases {
		out = append(out, h)
	}
	return out, l.clock.Now(), nil
}

func (l *memLease) ClaimLeases(ctx context.Context, holder string, keys []string, ttl time.Duration) ([]capstan.LeaseHolder, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "the database cannot be reached")
	}
	now := l.clock.Now()
	var out []capstan.LeaseHolder
	for _, k := range keys {
		h := l.leases[k]
		h.Key = k
		if h.ID == "" || h.ID == holder || h.Until.Before(now) {
			if h.ID != holder {
				h.Token++
			}
			h.ID, h.Until = holder, now.Add(ttl)
		}
		l.leases[k] = h
		out = append(out, h)
	}
	return out, nil
}

func (l *memLease) ReleaseLeases(ctx context.Context, holder string, keys []string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if h := l.leases[k]; h.ID == holder {
			h.ID, h.Until = "", l.clock.Now()
			h.Token++
			l.leases[k] = h
		}
	}
	return nil
}

func (l *memLease) LeaveExecutors(ctx context.Context, holder string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.members, holder)
	return nil
}

// blockingRunner runs a job until the test releases it or its context
// ends, and says when (on the test's clock) each started and was killed.
type blockingRunner struct {
	clock    *manualClock
	started  chan string
	killed   chan time.Time
	mu       sync.Mutex
	release  map[string]chan struct{}
	launches []string
}

func newBlockingRunner(clock *manualClock) *blockingRunner {
	return &blockingRunner{clock: clock, started: make(chan string, 8), killed: make(chan time.Time, 8), release: map[string]chan struct{}{}}
}

func (r *blockingRunner) gate(node string) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.release[node] == nil {
		r.release[node] = make(chan struct{})
	}
	return r.release[node]
}

func (r *blockingRunner) Run(ctx context.Context, j job.Job) job.Result {
	r.mu.Lock()
	r.launches = append(r.launches, j.NodeID)
	r.mu.Unlock()
	r.started <- j.NodeID
	select {
	case <-r.gate(j.NodeID):
		for _, a := range j.Artifacts { // what it made: a value per artifact
			if err := os.WriteFile(filepath.Join(j.Outputs, a.Name), []byte("made-by-"+j.NodeID), 0o600); err != nil {
				return job.Result{ExitCode: -1, ErrKind: "runner", Err: err}
			}
		}
		return job.Result{}
	case <-ctx.Done():
		r.killed <- r.clock.Now()
		return job.Result{ExitCode: -1, ErrKind: "cancelled", Err: ctx.Err()}
	}
}

func (r *blockingRunner) launched() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.launches)
}

// windowCase starts an executor on the embedded store holding every
// shard's lease (term 15 s on the test's clock) with one worker, and an
// operation of two jobs side by side (the second queued behind the
// first); it returns once the first job runs.
func windowCase(t *testing.T, options ...func(*executor.Config)) (*manualClock, *memLease, *blockingRunner, *executor.Executor, func(func(*capstan.Operation) bool) *capstan.Operation, *testenv.SyncBuffer) {
	org = testenv.NewOrg()
	store := testenv.Store(t)
	clock := newManualClock()
	lease := newMemLease(clock)
	runner := newBlockingRunner(clock)
	logs := &testenv.SyncBuffer{}
	cfg := executor.Config{Store: store, Dir: t.TempDir(), JobDir: t.TempDir(), Log: slog.New(slog.NewTextHandler(logs, nil)),
		Clock: clock, Lease: lease, LeaseHolder: "a", LeaseTerm: 15 * time.Second, Workers: 1, PerOperation: 1,
		Runners: map[string]job.Runner{"block": runner}}
	for _, o := range options {
		o(&cfg)
	}
	ex := executor.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); ex.Stop() })
	require.NoError(t, ex.Start(ctx))
	require.Len(t, ex.Owned(), shard.Shards)
	<-lease.tried // Start's renewal
	job := func(id string) capstan.PlanNode {
		n := capstan.PlanNode{ID: id, Type: capstan.NodeJob, Title: id, Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "block"},
			Outputs: capstan.JobOutputs{Evidence: []capstan.Probe{{Name: "ok", Type: "sim"}}}}}
		if cfg.Secrets != nil { // each makes a secret
			n.Job.Outputs.Artifacts = []capstan.ArtifactSpec{{Name: "token", Type: "credential", Sensitivity: capstan.SensitivitySecret}}
		}
		return n
	}
	plan := readyPlan(t, store, []capstan.PlanNode{job("one"), job("two")}, nil)
	require.NoError(t, plan.Move(capstan.PlanRunning))
	op := &capstan.Operation{IntentID: plan.IntentID, PlanID: plan.ID, PlanRevision: plan.Revision, Action: "bench", Status: capstan.OperationPending, Actor: "alice"}
	require.NoError(t, store.StartOperation(context.Background(), org, op, plan, nil, []capstan.OperationEvent{{Type: "operation.created", Actor: "alice"}}, nil))
	ex.Launch(org, op.ID, nil)
	require.Equal(t, "one", <-runner.started)
	wait := func(cond func(*capstan.Operation) bool) *capstan.Operation { return waitFor(t, store, op.ID, cond) }
	return clock, lease, runner, ex, wait, logs
}

// TestALeaseThatCannotBeRenewedKillsItsJobsFirst: when the database
// cannot be reached, the executor tries to renew every fifteenth of a
// term; once the next try could end after its leases run out, it stops
// its operations and kills their jobs — on its own clock before the
// leases run out, so before another executor can be granted them — and
// the queued job never starts.
func TestALeaseThatCannotBeRenewedKillsItsJobsFirst(t *testing.T) {
	clock, lease, runner, ex, _, _ := windowCase(t)
	until := clock.Now().Add(15 * time.Second) // Start's grant, by the database's (here the same) clock
	lease.setDown(true)
	for {
		at := clock.next(t) // the executor waits for its next try: the last one is over
		if len(ex.Owned()) == 0 {
			break // it stopped its operations
		}
		require.True(t, at.Before(until), "the executor still runs its jobs when its leases run out")
		clock.Advance(at.Sub(clock.Now()))
		clock.Fire()
		<-lease.tried // that renewal failed
	}
	killedAt := <-runner.killed
	require.True(t, killedAt.Before(until.Add(-shard.DefaultLeaseTerm/10)), "killed at %v, before its window closed (%v)", killedAt, until)

	// Now another executor takes the leases, once they ran out.
	clock.Advance(until.Sub(clock.Now()) + time.Millisecond)
	lease.setDown(false)
	got, err := lease.ClaimLeases(context.Background(), "b", []string{shard.ShardKey(0)}, 15*time.Second)
	require.NoError(t, err)
	require.Equal(t, "b", got[0].ID)
	require.Equal(t, []string{"one"}, runner.launched(), "the queued job never started")
}

// TestNoWorkStartsOutsideTheWindow: an executor stalled past its window
// (its clock moved on, its renewal has not run yet) starts nothing: the
// queued job and the probes of the job that just ended wait; a renewal
// that keeps the grant opens the window again and they go on from where
// they were.
func TestNoWorkStartsOutsideTheWindow(t *testing.T) {
	clock, lease, runner, _, wait, logs := windowCase(t)
	clock.Advance(14 * time.Second) // past the window (13.5 s), within the lease
	close(runner.gate("one"))       // the job ends meanwhile: a worker is free
	require.Eventually(t, func() bool { return strings.Count(logs.String(), "waits for a renewal") >= 1 }, 30*time.Second, 5*time.Millisecond,
		"the work is refused")
	require.Equal(t, []string{"one"}, runner.launched(), "the queued job did not start")

	clock.Fire() // the renewal runs: the lease is still this executor's
	<-lease.tried
	select {
	case node := <-runner.started:
		require.Equal(t, "two", node, "the queued job starts once the window moved")
	case <-time.After(20 * time.Second):
		t.Fatalf("the queued job never started after the renewal:\n%s", logs.String())
	}
	close(runner.gate("two"))
	wait(func(o *capstan.Operation) bool { return o.Status == capstan.OperationSucceeded }) // both proven by their probes
	require.Equal(t, []string{"one", "two"}, runner.launched(), "each job started once")
}

// TestADeposedOwnerKeepsNoSecret: a job that ends after its executor's
// window closed (its successor decides on the attempt) writes none of
// its secret artifacts to the secret store.
func TestADeposedOwnerKeepsNoSecret(t *testing.T) {
	secrets := &memSecrets{values: map[string][]byte{}}
	clock, _, runner, _, wait, logs := windowCase(t, func(c *executor.Config) { c.Secrets = secrets })
	t.Cleanup(func() { t.Log(logs.String()) })
	clock.Advance(14 * time.Second) // past the window: nothing renewed it
	close(runner.gate("one"))
	op := wait(func(o *capstan.Operation) bool { return o.Status.Terminal() }) // here nothing fences the store: the attempt's end is recorded
	require.Equal(t, capstan.OperationFailed, op.Status)
	require.Empty(t, secrets.names(), "no secret written by a deposed owner")
}

// skewedClock is a replica's view of the test's clock: its own time is
// off by skew; its timers are the test's.
type skewedClock struct {
	*manualClock
	skew time.Duration
}

func (c skewedClock) Now() time.Time { return c.manualClock.Now().Add(c.skew) }

// forget drops every timer (their executor stopped).
func (c *manualClock) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = nil
}

// pending are the times the clock's timers fire at.
func (c *manualClock) pending() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Time
	for _, tm := range c.timers {
		out = append(out, tm.at)
	}
	return out
}

// TestAGateTimesOutOnTheDatabasesClock: a gate's wait is stamped by one
// replica and timed out by another whose clock is an hour ahead of the
// first's; both count on the database's clock, so the new owner waits
// out the rest of the gate's ten minutes, not none of them.
func TestAGateTimesOutOnTheDatabasesClock(t *testing.T) {
	org = testenv.NewOrg()
	store := testenv.Store(t)
	db := newManualClock() // the database's clock (the leases')
	lease := newMemLease(db)
	replica := func(holder string, skew time.Duration) *executor.Executor {
		ex := executor.New(executor.Config{Store: store, Dir: t.TempDir(), JobDir: t.TempDir(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Clock: skewedClock{db, skew}, Lease: lease, LeaseHolder: holder, LeaseTerm: 15 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(func() { cancel(); ex.Stop() })
		require.NoError(t, ex.Start(ctx))
		return ex
	}
	behind := replica("behind", -time.Hour) // its clock an hour behind the database's
	nodes := []capstan.PlanNode{{ID: "gate", Type: capstan.NodeGate, Title: "gate", Gate: &capstan.GateSpec{Type: "approval", Reason: "clocks", RequiredRoles: []string{capstan.RoleSRE}, Timeout: "10m"}}}
	plan := readyPlan(t, store, nodes, nil)
	require.NoError(t, plan.Move(capstan.PlanRunning))
	op := &capstan.Operation{IntentID: plan.IntentID, PlanID: plan.ID, PlanRevision: plan.Revision, Action: "bench", Status: capstan.OperationPending, Actor: "alice"}
	require.NoError(t, store.StartOperation(context.Background(), org, op, plan, nil, []capstan.OperationEvent{{Type: "operation.created", Actor: "alice"}}, nil))
	behind.Launch(org, op.ID, nil)
	waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })
	behind.Stop() // gives its leases back
	db.forget()   // its timers went with it

	db.Advance(4 * time.Minute)
	ahead := replica("ahead", 0) // takes the shards; its clock is the database's
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(db.pending(), func(at time.Time) bool { return at.After(db.Now().Add(time.Minute)) })
	}, 30*time.Second, 5*time.Millisecond, "the new owner schedules the gate's timeout")
	require.Contains(t, db.pending(), db.Now().Add(6*time.Minute), "the rest of the gate's ten minutes")
	stored, err := store.GetOperation(context.Background(), org, op.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.OperationWaiting, stored.Status, "the gate still waits")
	_ = ahead
}

// memSecrets is a secret store in memory.
type memSecrets struct {
	mu     sync.Mutex
	values map[string][]byte
}

func (m *memSecrets) Get(ctx context.Context, org, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[name]
	if !ok {
		return nil, capstan.Errorf(capstan.ENOTFOUND, "secret %s not found", name)
	}
	return v, nil
}

func (m *memSecrets) Put(ctx context.Context, org, name string, value []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.values[name] = value
	return nil
}

func (m *memSecrets) Redactor(ctx context.Context, org string) (*secret.Redactor, error) {
	return secret.NewRedactor(nil), nil
}

func (m *memSecrets) names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for n := range m.values {
		out = append(out, n)
	}
	return out
}

// childHooks starts children by counting them (the service's part).
type childHooks struct {
	executor.Hooks
	mu      sync.Mutex
	started []string
}

func (h *childHooks) StartChild(ctx context.Context, org string, parent *capstan.Operation, node *capstan.PlanNode, attempt int, fence *capstan.Fence) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started = append(h.started, node.ID)
	return "child-of-" + parent.ID, nil
}

func (h *childHooks) starts() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.started)
}

// TestNoChildStartsOutsideTheWindow: a sub-operation's child is a side
// effect too: an executor past its window does not start it; after the
// renewal that keeps its grant, it starts it, once.
func TestNoChildStartsOutsideTheWindow(t *testing.T) {
	org = testenv.NewOrg()
	store := testenv.Store(t)
	clock := newManualClock()
	lease := newMemLease(clock)
	hooks := &childHooks{}
	logs := &testenv.SyncBuffer{}
	ex := executor.New(executor.Config{Store: store, Dir: t.TempDir(), JobDir: t.TempDir(), Log: slog.New(slog.NewTextHandler(logs, nil)),
		Clock: clock, Lease: lease, LeaseHolder: "a", LeaseTerm: 15 * time.Second, Hooks: hooks})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); ex.Stop() })
	require.NoError(t, ex.Start(ctx))
	<-lease.tried
	nodes := []capstan.PlanNode{{ID: "store", Type: capstan.NodeSubOperation, Title: "store", SubOperation: &capstan.SubOperationSpec{Scenario: "minio.install"}}}
	plan := readyPlan(t, store, nodes, nil)
	require.NoError(t, plan.Move(capstan.PlanRunning))
	op := &capstan.Operation{IntentID: plan.IntentID, PlanID: plan.ID, PlanRevision: plan.Revision, Action: "bench", Status: capstan.OperationPending, Actor: "alice"}
	require.NoError(t, store.StartOperation(context.Background(), org, op, plan, nil, []capstan.OperationEvent{{Type: "operation.created", Actor: "alice"}}, nil))

	clock.Advance(14 * time.Second) // past the window (13.5 s): stalled, its renewal not run yet
	ex.Launch(org, op.ID, nil)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "starts after a renewal") }, 30*time.Second, 5*time.Millisecond,
		"the child's start is refused")
	require.Zero(t, hooks.starts(), "no child started outside the window")

	clock.Fire() // the renewal: the lease is still this executor's
	<-lease.tried
	require.Eventually(t, func() bool { // the step's retry, a second later on the executor's clock
		clock.Advance(100 * time.Millisecond)
		clock.Fire()
		return hooks.starts() == 1
	}, 30*time.Second, 5*time.Millisecond, "the child starts after the renewal")
	waitFor(t, store, op.ID, func(o *capstan.Operation) bool {
		return len(o.OpenPatches) == 0 && o.Status == capstan.OperationRunning
	})
	require.Equal(t, 1, hooks.starts(), "once")
}
