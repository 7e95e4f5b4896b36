package executor

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/secret"
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
	Runners map[string]Runner
	// RemoteRunners are added to the default runners: those that act on
	// target hosts (executor/remote's ssh), which this package does not
	// import.
	RemoteRunners map[string]Runner
	// Workers bounds jobs and probes running at once across operations.
	Workers int
	// Dir holds job sandboxes and diagnostics artifacts.
	Dir string
	// Hooks reach the rest of the product (the service): sub-operations.
	Hooks Hooks
	// Prober runs evidence probes; its Resources default to Store.
	Prober Prober
	// PerOperation bounds the jobs and probes one operation runs at once,
	// so one wide operation cannot take every worker (default Workers/2).
	PerOperation int
	// Analyzer answers ai_analysis nodes (DeterministicAnalyzer by default).
	Analyzer Analyzer
	// Lease, when set, keeps a second executor off the same database
	// (lease.go): Start waits for it, it is renewed while the executor
	// runs, and operations stop if it is lost.
	Lease Lease
	// LeaseHolder names this executor to others (default: host and Dir).
	LeaseHolder string
	// LeaseTerm is how long the lease lasts unrenewed (DefaultLeaseTerm).
	LeaseTerm time.Duration
	// Sandbox confines shell jobs and command probes (nil: they run as the
	// server's user with only an allow-listed environment).
	Sandbox *Sandbox
	// Egress bounds where http jobs and probes may call (nil: anywhere).
	Egress *Egress
	// Secrets resolves secret:<name> parameters, keeps the values of
	// secret artifacts, and masks every secret value of the organization
	// in what jobs and probes print (nil: no secret store; secret
	// artifacts are masked in their own job's output only).
	Secrets Secrets
	// KeepSandboxes keeps a finished operation's sandbox directory (for
	// debugging and tests); by default it is removed when the operation
	// ends (sandboxdir.go).
	KeepSandboxes bool
	// Tenure, when set, runs for as long as this executor works (holds
	// the lease), in a goroutine it waits for when the tenure ends: work
	// that must run in one process of many (the assessment schedule).
	Tenure func(ctx context.Context)
}

// Secrets is the secret store as the executor uses it (secret.Vault).
type Secrets interface {
	Get(ctx context.Context, org, name string) ([]byte, error)
	Put(ctx context.Context, org, name string, value []byte) error
	Redactor(ctx context.Context, org string) (*secret.Redactor, error)
}

// Hooks are what the executor asks of the service: child operations for
// sub_operation nodes (planning a child is the service's business). The
// resource, intent and plan an operation changes are the executor's own
// (resource.go). Every method may be repeated after a restart.
type Hooks interface {
	// StartChild starts (or, after a restart, finds) the child operation
	// of a sub_operation node and returns its id.
	StartChild(ctx context.Context, org string, parent *capstan.Operation, node *capstan.PlanNode) (string, error)
	// CancelChild asks a (child) operation to stop.
	CancelChild(ctx context.Context, org, operationID string) error
	// ProposeFromAnalysis proposes an analysis's changes to the plan at
	// revision base as a PlanPatch authored by the analyzer, for people
	// to approve (assist.go).
	ProposeFromAnalysis(ctx context.Context, org, operationID string, base int, node string, a capstan.Analysis, evidence []string) error
	// RecheckPatches marks stale the operation's proposed patches that no
	// longer apply after its nodes moved (assist.go).
	RecheckPatches(ctx context.Context, org, operationID string) error
}

// Executor runs operations: one goroutine owns each running operation's
// state; jobs and probes run on a bounded pool of workers; every state
// change is persisted (with its timeline event) before it is acted on.
type Executor struct {
	cfg   Config
	tasks chan func()

	mu      sync.Mutex
	running map[string]*loop // by org|operation id
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	// A tenure: the time the executor runs operations, from Start, or
	// from taking its lease back after it ran out (lease.go), to Stop or
	// to the lease running out. Loops, workers and timers use run and
	// count in wg.
	run     context.Context
	stopRun context.CancelFunc

	lost       chan error    // the lease was lost to another executor (lease.go)
	loseOnce   sync.Once     // lost is told once, by the lease goroutine or a fenced write
	fence      capstan.Fence // the lease's grant this executor holds (lease.go); under mu
	leaseDone  chan struct{} // closed when the lease goroutine has ended
	leaseUntil time.Time     // when the lease held runs out; only the lease goroutine uses it after Start
	dirLock    *os.File      // holds Dir to this process while it may hold the lease
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
	var client *http.Client
	if cfg.Egress != nil {
		client = cfg.Egress.Client()
	}
	if cfg.Runners == nil {
		cfg.Runners = map[string]Runner{"shell": ShellRunner{Dir: filepath.Join(cfg.Dir, "sandbox"), Sandbox: cfg.Sandbox}, "sim": SimRunner{}, "http": HTTPRunner{Client: client}}
		for name, r := range cfg.RemoteRunners {
			cfg.Runners[name] = r
		}
	}
	if cfg.Prober.Client == nil {
		cfg.Prober.Client = client
	}
	if cfg.Prober.Resources == nil {
		cfg.Prober.Resources = cfg.Store
	}
	if cfg.Prober.Sandbox == nil {
		cfg.Prober.Sandbox = cfg.Sandbox
	}
	if cfg.Analyzer == nil {
		cfg.Analyzer = DeterministicAnalyzer{}
	}
	if cfg.PerOperation <= 0 {
		cfg.PerOperation = max(1, cfg.Workers/2)
	}
	if cfg.LeaseHolder == "" {
		cfg.LeaseHolder = defaultHolder(cfg.Dir)
	}
	if cfg.LeaseTerm <= 0 {
		cfg.LeaseTerm = DefaultLeaseTerm
	}
	return &Executor{cfg: cfg, tasks: make(chan func()), running: map[string]*loop{}, lost: make(chan error, 1)}
}

// Start starts the workers and resumes every unfinished operation; with
// a Lease, once it holds the lease (no operation runs before).
func (e *Executor) Start(ctx context.Context) error {
	began := time.Now()
	for _, d := range []string{"sandbox", "artifacts"} {
		if err := os.MkdirAll(filepath.Join(e.cfg.Dir, d), 0o750); err != nil {
			return capstan.Wrap("executor.Start", err)
		}
	}
	if e.cfg.Lease != nil {
		dirLock, err := lockDir(e.cfg.Dir)
		if err != nil {
			return err
		}
		if err := e.acquireLease(ctx); err != nil {
			dirLock.Close()
			return err
		}
		e.dirLock = dirLock
	}
	e.mu.Lock()
	e.ctx, e.cancel = context.WithCancel(ctx)
	e.mu.Unlock()
	if e.cfg.Lease != nil {
		e.leaseDone = make(chan struct{})
		go func() {
			defer close(e.leaseDone)
			e.keepLease()
		}()
	}
	if ops, err := e.cfg.Store.UnfinishedOperations(ctx); err == nil {
		unfinished := map[string]bool{}
		for _, op := range ops {
			unfinished[op.ID] = true
		}
		e.sweepSandboxes(unfinished, began)
	}
	return e.beginTenure()
}

// beginTenure starts the workers and resumes every unfinished operation:
// the executor runs operations from here until endTenure (or Stop).
func (e *Executor) beginTenure() error {
	e.mu.Lock()
	run, stop := context.WithCancel(e.ctx)
	if e.cfg.Lease != nil { // every operation write of this tenure carries the grant
		run = capstan.WithFence(run, e.fence)
	}
	e.run, e.stopRun = run, stop
	e.mu.Unlock()
	if e.cfg.Tenure != nil {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			e.cfg.Tenure(run)
		}()
	}
	for i := 0; i < e.cfg.Workers; i++ {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			for {
				select {
				case task := <-e.tasks:
					task()
				case <-run.Done():
					return
				}
			}
		}()
	}
	return e.launchUnfinished(run)
}

// launchUnfinished launches every unfinished operation not running yet.
func (e *Executor) launchUnfinished(ctx context.Context) error {
	ops, err := e.cfg.Store.UnfinishedOperations(ctx)
	if err != nil {
		return err
	}
	for _, op := range ops { // each reads its own operation: one that cannot be read retries alone
		e.Launch(op.OrganizationID, op.ID, nil)
	}
	return nil
}

// inTenure reports whether the executor runs operations now.
func (e *Executor) inTenure() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.run != nil
}

// endTenure stops every operation goroutine, job and worker and waits for
// them; what they did is persisted, and the next tenure resumes from it.
func (e *Executor) endTenure() {
	e.mu.Lock()
	stop := e.stopRun
	e.run, e.stopRun = nil, nil
	e.mu.Unlock()
	if stop != nil {
		stop()
	}
	e.wg.Wait()
}

// Launch makes sure a goroutine is running the operation. plan, when not
// nil, is the operation's plan as its start stored it: the loop takes it
// instead of reading (and decoding) it again.
func (e *Executor) Launch(org, opID string, plan *capstan.Plan) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := org + "|" + opID
	run := e.run
	if e.running[k] != nil || run == nil || run.Err() != nil {
		return
	}
	l := newLoop(e, org, opID)
	l.started = plan
	e.running[k] = l
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		l.run(run)
		e.mu.Lock()
		delete(e.running, k)
		e.mu.Unlock()
	}()
}

// Notify wakes the operation's goroutine after an outside change (a gate
// decision, an intervention), launching it if it is not running.
func (e *Executor) Notify(org, opID string) {
	e.mu.Lock()
	l := e.running[org+"|"+opID]
	e.mu.Unlock()
	if l == nil {
		e.Launch(org, opID, nil)
		return
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Stop cancels every operation goroutine and worker and waits for them.
// Unfinished operations stay as persisted and resume on the next Start.
func (e *Executor) Stop() {
	e.mu.Lock()
	cancel := e.cancel
	e.mu.Unlock()
	if cancel == nil {
		return // never started
	}
	cancel()
	if e.leaseDone != nil {
		<-e.leaseDone
	}
	e.endTenure()
	if e.cfg.Lease != nil {
		e.releaseLease()
		e.dirLock.Close()
	}
}
