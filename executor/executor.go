package executor

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
	"github.com/capstan-dev/capstan/artifact"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/executor/probe"
	"github.com/capstan-dev/capstan/executor/shard"
	"github.com/capstan-dev/capstan/tracing"
)

// Clock gives the executor its time; tests inject one.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Config configures an executor.
type Config struct {
	Store capstan.Store
	Log   *slog.Logger
	Clock Clock
	// Runners by job contract runner name; shell, http and sim by default.
	Runners map[string]job.Runner
	// RemoteRunners are added to the default runners: those that act on
	// target hosts (executor/remote's ssh), which this package does not
	// import.
	RemoteRunners map[string]job.Runner
	// Workers bounds jobs and probes running at once across operations.
	Workers int
	// Dir holds what the executor keeps on this replica: diagnostics
	// (without a shared artifact store), the directory lock.
	Dir string
	// Artifacts keeps the bytes of the artifacts jobs produce (default:
	// artifact.Dir{Root: Dir}, for one process; replicas share an
	// object store: artifact.Stores with an *artifact.S3).
	Artifacts artifact.Store
	// JobDir holds the operations' working directories, where their jobs
	// write: sandbox/<op> and outputs/<op>. It lies apart from Dir because
	// a job's mount table names the paths its directories are bound from
	// (default: DefaultJobDir(Dir); jobdir.go).
	JobDir string
	// Hooks reach the rest of the product (the service): sub-operations.
	Hooks Hooks
	// Wakes, when set, tells the executor of an operation started or
	// commanded in this process (live.Wakes): it listens from Start to
	// Stop. Without it, Launch and Notify are called by hand (tests).
	Wakes Wakes
	// Prober runs evidence probes (default: a probe.Prober on Store, the
	// Sandbox and the Egress client, without remote probes).
	Prober job.Prober
	// PerOperation bounds the jobs and probes one operation runs at once,
	// so one wide operation cannot take every worker (default Workers/2).
	PerOperation int
	// Analyzer answers ai_analysis nodes (analysis.Deterministic by default)
	// and the failures of jobs that allow AI assistance, after the packs'
	// failure rules; SkipRules asks it even where a rule knows the
	// failure (an evaluation, a demonstration of the model).
	Analyzer  analysis.Analyzer
	SkipRules bool
	// shard.Lease, when set, keeps a second executor off the same database
	// (lease.go): Start waits for it, it is renewed while the executor
	// runs, and operations stop if it is lost.
	Lease shard.Lease
	// LeaseHolder names this executor to others (default: host and Dir).
	LeaseHolder string
	// LeaseTerm is how long the lease lasts unrenewed (shard.DefaultLeaseTerm).
	LeaseTerm time.Duration
	// Sandbox confines shell jobs and command probes (nil: they run as the
	// server's user with only an allow-listed environment).
	Sandbox *local.Sandbox
	// Egress bounds where http jobs and probes may call (nil: anywhere).
	Egress *local.Egress
	// TraceIDs derives the TRACEPARENT each job gets (the ids
	// tracing.Store gives the attempt's span).
	TraceIDs tracing.IDs
	// Secrets resolves secret:<name> parameters, keeps the values of
	// secret artifacts, and masks every secret value of the organization
	// in what jobs and probes print (nil: no secret store; secret
	// artifacts are masked in their own job's output only).
	Secrets job.Secrets
	// KeepSandboxes keeps a finished operation's sandbox directory (for
	// debugging and tests); by default it is removed when the operation
	// ends (sandboxdir.go).
	KeepSandboxes bool
	// Tenure, when set, runs for as long as this executor works (holds
	// the lease), in a goroutine it waits for when the tenure ends: work
	// that must run in one process of many (the assessment schedule).
	Tenure func(ctx context.Context)
}

// Wakes is how the store of this process tells the executor of an
// operation to act on (live.Wakes): its plan when it was just started.
type Wakes interface {
	Listen(fn func(org, opID string, plan *capstan.Plan))
}

// Hooks are what the executor asks of the service: child operations for
// sub_operation nodes (planning a child is the service's business). The
// resource, intent and plan an operation changes are the executor's own
// (resource.go). Every method may be repeated after a restart.
type Hooks interface {
	// StartChild starts (or, after a restart, finds) the child operation
	// of a sub_operation node's attempt and returns its id; it starts it
	// under fence (the executor's grant of the parent's shard; nil:
	// none), so a deposed executor starts none.
	StartChild(ctx context.Context, org string, parent *capstan.Operation, node *capstan.PlanNode, attempt int, fence *capstan.Fence) (string, error)
	// CancelChild asks a (child) operation to stop: a command for its
	// owner, not waited for.
	CancelChild(ctx context.Context, org, operationID string) error
	// DecideCommand decides a command recorded for the operation on its
	// state as stored: the change that applies it (nil: none), what it
	// made (a patch's id), and why it is refused (with a change all the
	// same, at times: a patch found stale). The loop commits the change
	// with the command's outcome (command.go).
	DecideCommand(ctx context.Context, org, opID string, c capstan.Command) (*capstan.OperationChange, string, error)
	// ProposeFromAnalysis proposes an analysis's changes to the plan at
	// revision base as a PlanPatch authored by the analyzer, for people
	// to approve (assist.go).
	ProposeFromAnalysis(ctx context.Context, org, operationID string, base int, node string, a capstan.Analysis, evidence []string) error
	// AnalysisFailed records on the operation's timeline that the
	// analysis of a failed node gave nothing to propose, and why
	// (analysis.failed): the model's refusal, rate limit, outage or
	// budget, or an answer that did not hold.
	AnalysisFailed(ctx context.Context, org, operationID, node, analyzer string, reason error) error
}

// Executor runs operations: one goroutine owns each running operation's
// state; jobs and probes run on a bounded pool of workers; every state
// change is persisted (with its timeline event) before it is acted on.
// It runs the operations of the shards it owns (own.go).
type Executor struct {
	cfg   Config
	tasks chan func()

	mu      sync.Mutex
	running map[string]*loop          // by org|operation id
	shards  [shard.Shards]*ownedShard // the shards it owns now (own.go)
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup // workers and drain watchers

	kick       chan struct{} // asks keepShards to renew at once (a fenced write)
	starting   chan struct{} // closed when Start has returned
	stopped    bool          // Stop (or a failed Start) has stopped everything; under mu
	leaseDone  chan struct{} // closed when keepShards has ended
	leaseUntil time.Time     // when the leases held run out; only keepShards uses it after Start
	renewals   int           // renewals so far; only keepShards uses it after Start
	dirLock    *os.File      // holds Dir to this process while it may hold leases
	// dbOffset is how far the database's clock is ahead of this
	// executor's (nanoseconds), as the last renewal measured it
	// (clock.go); 0 without a Lease.
	dbOffset atomic.Int64
}

// New returns an executor; Start sets it going.
func New(cfg Config) *Executor {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.JobDir == "" {
		cfg.JobDir = DefaultJobDir(cfg.Dir)
	}
	if cfg.Artifacts == nil {
		cfg.Artifacts = artifact.Dir{Root: cfg.Dir}
	}
	var client *http.Client
	if cfg.Egress != nil {
		client = cfg.Egress.Client()
	}
	if cfg.Runners == nil {
		cfg.Runners = map[string]job.Runner{"shell": local.ShellRunner{Dir: filepath.Join(cfg.JobDir, "sandbox"), Sandbox: cfg.Sandbox}, "sim": local.SimRunner{}, "http": local.HTTPRunner{Client: client}}
		for name, r := range cfg.RemoteRunners {
			cfg.Runners[name] = r
		}
	}
	if cfg.Prober == nil {
		cfg.Prober = probe.Prober{Client: client, Resources: cfg.Store, Sandbox: cfg.Sandbox}
	}
	if cfg.Analyzer == nil {
		cfg.Analyzer = analysis.Deterministic{}
	}
	if cfg.PerOperation <= 0 {
		cfg.PerOperation = max(1, cfg.Workers/2)
	}
	if cfg.LeaseHolder == "" {
		cfg.LeaseHolder = shard.DefaultHolder(cfg.Dir)
	}
	if cfg.LeaseTerm <= 0 {
		cfg.LeaseTerm = shard.DefaultLeaseTerm
	}
	return &Executor{cfg: cfg, tasks: make(chan func()), running: map[string]*loop{}, kick: make(chan struct{}, 1)}
}

// Start starts the workers and resumes the unfinished operations of the
// shards it owns: every shard without a Lease; with one, its fair share
// of them, taken at once, and more as they come free (keepShards).
func (e *Executor) Start(ctx context.Context) error {
	began := time.Now()
	for _, d := range []string{"outputs", "artifacts"} {
		if err := os.MkdirAll(filepath.Join(e.cfg.Dir, d), 0o750); err != nil {
			return capstan.Wrap("executor.Start", err)
		}
	}
	if e.cfg.Lease != nil {
		dirLock, err := shard.LockDir(e.cfg.Dir)
		if err != nil {
			return err
		}
		e.dirLock = dirLock
	}
	if err := makeJobDir(e.cfg.JobDir); err != nil {
		e.dirLock.Close()
		return err
	}
	if e.cfg.Wakes != nil {
		e.cfg.Wakes.Listen(e.Wake)
	}
	e.mu.Lock()
	e.ctx, e.cancel = context.WithCancel(ctx)
	starting := make(chan struct{})
	e.starting = starting
	e.mu.Unlock()
	defer close(starting)
	for i := 0; i < e.cfg.Workers; i++ {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			for {
				select {
				case task := <-e.tasks:
					task()
				case <-e.ctx.Done():
					return
				}
			}
		}()
	}
	if ops, err := e.cfg.Store.UnfinishedOperations(ctx); err == nil {
		unfinished := map[string]bool{}
		for _, op := range ops {
			unfinished[op.ID] = true
		}
		e.sweepSandboxes(unfinished, began)
	}
	if e.cfg.Lease == nil {
		for i := range shard.Shards {
			e.beginShard(i, capstan.Fence{})
		}
		return e.launchShards(e.ctx, nil)
	}
	if err := e.renewShards(max(shard.RenewTimeout(e.cfg.LeaseTerm), startTimeout)); err != nil {
		e.stopAll()
		return err
	}
	leaseDone := make(chan struct{})
	e.mu.Lock()
	e.leaseDone = leaseDone
	e.mu.Unlock()
	go func() {
		defer close(leaseDone)
		e.keepShards()
	}()
	return nil
}

// startTimeout bounds the first renewal, at Start.
const startTimeout = 30 * time.Second

// Launch makes sure a goroutine is running the operation, when this
// executor owns its shard. plan, when not nil, is the operation's plan as
// its start stored it: the loop takes it instead of reading (and
// decoding) it again.
func (e *Executor) Launch(org, opID string, plan *capstan.Plan) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := org + "|" + opID
	sh := e.shards[shard.ShardOf(opID)]
	if e.running[k] != nil || sh == nil || sh.draining || sh.run.Err() != nil {
		return
	}
	l := newLoop(e, org, opID)
	l.started, l.shard, l.drain, l.window = plan, sh.index, sh.drain, sh.window
	if e.cfg.Lease != nil {
		l.fence = &sh.fence
	}
	e.running[k] = l
	sh.loops.Add(1)
	go func() {
		defer sh.loops.Done()
		l.run(sh.run)
		e.mu.Lock()
		delete(e.running, k)
		e.mu.Unlock()
	}()
}

// Wake acts on an operation this process's store started (plan set) or
// gave a command.
func (e *Executor) Wake(org, opID string, plan *capstan.Plan) {
	if plan != nil {
		e.Launch(org, opID, plan)
		return
	}
	e.Notify(org, opID)
}

// Notify wakes the operation's goroutine after an outside change (a gate
// decision, an intervention), launching it if it is not running.
func (e *Executor) Notify(org, opID string) { e.wakeLoop(org, opID, outsideChange) }

// wakeLoop wakes the operation's goroutine with note, launching it if it
// is not running.
func (e *Executor) wakeLoop(org, opID string, note func(*wakeNote)) {
	e.mu.Lock()
	l := e.running[org+"|"+opID]
	e.mu.Unlock()
	if l == nil {
		e.Launch(org, opID, nil)
		return
	}
	l.wakeFor(note)
}

// Touched tells the executor that a commit it did not make touched an
// operation (another process's, read by the timeline tailer): the
// operation's loop here wakes, or starts when this executor owns it, and
// so does its parent, which follows it.
func (e *Executor) Touched(t capstan.OperationTouch) {
	if t.Active {
		e.wakeLoop(t.OrganizationID, t.ID, touch(t))
	}
	if t.ParentID != "" {
		if !t.Active && e.runs(t.OrganizationID, t.ParentID) {
			e.cfg.Log.Info("a sub-operation ended on another replica; its parent goes on", "operation", t.ParentID, "child", t.ID)
		}
		e.Notify(t.OrganizationID, t.ParentID)
	}
}

// runs reports whether the operation's loop runs here.
func (e *Executor) runs(org, opID string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running[org+"|"+opID] != nil
}

// Stop cancels every operation goroutine and worker and waits for them,
// then gives its leases back. Unfinished operations stay as persisted and
// resume on the next Start, or at once on another executor.
func (e *Executor) Stop() {
	e.mu.Lock()
	cancel, starting := e.cancel, e.starting
	e.mu.Unlock()
	if cancel == nil {
		return // never started
	}
	cancel()
	<-starting // a Start still under way ends first (cancelled)
	e.mu.Lock()
	leaseDone, stopped := e.leaseDone, e.stopped
	e.stopped = true
	e.mu.Unlock()
	if stopped {
		return
	}
	if leaseDone != nil {
		<-leaseDone
	}
	e.stopAll()
	leaveJobDir(e.cfg.JobDir)
}

// stopAll ends every shard and worker; with a Lease it releases the
// shards and withdraws the executor.
func (e *Executor) stopAll() {
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	e.cancel()
	var keys []string
	for i := range e.owned() {
		e.endShard(i)
		keys = append(keys, shard.ShardKey(i))
	}
	e.wg.Wait()
	if e.cfg.Lease != nil {
		e.releaseAll(keys)
		e.dirLock.Close()
	}
}
