package executor

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/shard"
)

// An executor runs the operations of the shards it owns. Without a Lease
// (the embedded store: one process) it owns every shard for good. With
// one, keepShards renews its leases every third of a term, takes its
// fair share of the free ones (Decide) and hands over what is beyond it:
// a shard being handed over starts nothing new, and once its operations
// have no work out it is released for the member that has room. A shard
// whose lease went to another executor, or whose write was fenced, stops
// at once (its loops end; what they did is persisted, and the new owner
// resumes from it).

// ownedShard is one shard this executor owns, from its grant until it ends.
type ownedShard struct {
	index int
	// fence is the grant its writes carry (zero without a Lease).
	fence capstan.Fence
	// window is how long its work may still start and run (window.go):
	// extended by every renewal that keeps the grant.
	window *shard.Window
	// run is the context its loops run under, stop ends it.
	run  context.Context
	stop context.CancelFunc
	// hook is the Tenure's context (shard 0 only), ended at a hand-over.
	hook context.CancelFunc
	// drain is closed when the shard is handed over; idle is closed
	// once no loop of it runs any more.
	drain, idle chan struct{}
	// loops counts its operation goroutines (and the Tenure).
	loops sync.WaitGroup
	// draining and fenced are set under the executor's mu; drainSince
	// is when the hand-over began.
	draining, fenced bool
	drainSince       time.Time
}

// abandonedAfter is how many lease terms a shard stays free before any
// member takes it beyond its share (Decide).
const abandonedAfter = 3

// maxDrain is how many lease terms a hand-over waits for the shard's
// work to finish before it ends the shard anyway.
const maxDrain = 2

// beginShard starts running shard i under fence; its unfinished
// operations are launched by the caller (launchShards).
func (e *Executor) beginShard(i int, fence capstan.Fence) {
	run, stop := context.WithCancel(e.ctx)
	sh := &ownedShard{index: i, fence: fence, run: run, stop: stop, drain: make(chan struct{}), idle: make(chan struct{}),
		window: shard.NewWindow(e.cfg.Clock, e.cfg.Lease != nil)}
	sh.window.Extend(e.windowEnd())
	e.mu.Lock()
	e.shards[i] = sh
	e.mu.Unlock()
	if i == 0 && e.cfg.Tenure != nil {
		hookCtx, endHook := context.WithCancel(run)
		sh.hook = endHook
		sh.loops.Add(1)
		go func() {
			defer sh.loops.Done()
			e.cfg.Tenure(hookCtx)
		}()
	}
}

// windowEnd is when the windows of the shards the last renewal granted
// close: a margin before the leases run out.
func (e *Executor) windowEnd() time.Time {
	return e.leaseUntil.Add(-shard.WindowMargin(e.cfg.LeaseTerm))
}

// endShard stops shard i's operations and waits for them.
func (e *Executor) endShard(i int) { e.endShards([]int{i}) }

// endShards stops the shards' operations — every one of them first, so
// that no shard's loops run on while another's are waited for — and then
// waits for them.
func (e *Executor) endShards(list []int) {
	var ended []*ownedShard
	e.mu.Lock()
	for _, i := range list {
		if sh := e.shards[i]; sh != nil {
			e.shards[i] = nil
			ended = append(ended, sh)
		}
	}
	e.mu.Unlock()
	for _, sh := range ended {
		sh.stop()
	}
	for _, sh := range ended {
		sh.loops.Wait()
	}
}

// drainShard hands shard i over: its loops start nothing new and end once
// no work of theirs is out; idle is closed then.
func (e *Executor) drainShard(i int) {
	e.mu.Lock()
	sh := e.shards[i]
	if sh == nil || sh.draining {
		e.mu.Unlock()
		return
	}
	sh.draining, sh.drainSince = true, e.cfg.Clock.Now()
	e.mu.Unlock()
	close(sh.drain)
	if sh.hook != nil {
		sh.hook()
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		sh.loops.Wait()
		close(sh.idle)
	}()
}

// fencedShard stops shard i after the store refused one of its writes:
// another executor holds its lease now. The loop that saw it returns; the
// others end with the shard's context, and the next renewal finishes it.
func (e *Executor) fencedShard(i int, err error) {
	e.cfg.Log.Error("a write was refused: another executor holds this shard now; no longer running its operations", "shard", shard.ShardKey(i), "err", err.Error())
	e.mu.Lock()
	sh := e.shards[i]
	if sh != nil {
		sh.fenced = true
		sh.stop()
	}
	e.mu.Unlock()
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// owned returns the shards this executor runs now.
func (e *Executor) owned() map[int]*ownedShard {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[int]*ownedShard{}
	for i, sh := range e.shards {
		if sh != nil {
			out[i] = sh
		}
	}
	return out
}

// Owned lists the shards this executor runs now (for /metrics and tests).
func (e *Executor) Owned() []int {
	var out []int
	for i := range e.owned() {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// launchShards launches the unfinished operations of shards (all owned
// ones when nil) that do not run yet.
func (e *Executor) launchShards(ctx context.Context, shards map[int]bool) error {
	ops, err := e.cfg.Store.UnfinishedOperations(ctx)
	if err != nil {
		return err
	}
	for _, op := range ops { // each reads its own operation: one that cannot be read retries alone
		if shards == nil || shards[shard.ShardOf(op.ID)] {
			e.Launch(op.OrganizationID, op.ID, nil)
		}
	}
	return nil
}

// keepShards renews this executor's leases until it stops (own.go).
// While the database cannot be reached the executor runs on (its steps
// cannot commit anyway), trying again every fifteenth of a term, until
// the leases would run out before the next attempt ends; then it stops
// running operations — another executor may take them once they have run
// out — and keeps trying.
func (e *Executor) keepShards() {
	c := e.cfg
	wait := c.LeaseTerm / 3
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-c.Clock.After(wait):
		case <-e.kick:
		}
		wait = c.LeaseTerm / 3
		err := e.renewShards(shard.RenewTimeout(c.LeaseTerm))
		switch {
		case e.ctx.Err() != nil:
			return
		case err == nil:
		case len(e.owned()) == 0:
			wait = c.LeaseTerm / 15
			c.Log.Warn("renewing the executor's leases failed; trying again", "err", err.Error())
		case !shard.Outlasts(c.Clock.Now(), e.leaseUntil, c.LeaseTerm):
			wait = c.LeaseTerm / 15
			c.Log.Warn("renewing the executor's leases failed; trying again", "err", err.Error(), "until", e.leaseUntil)
		default:
			wait = c.LeaseTerm / 15
			c.Log.Error("the executor's leases run out before they can be renewed; stopping operations until they are", "err", err.Error())
			e.endShards(keysOfShards(e.owned()))
		}
	}
}

// renewShards is one renewal: announce this executor, read the leases,
// decide (Decide), claim, and start, end, hand over and release shards
// as the answer says.
//
// A renewal takes at most timeout: renewTimeout once running (it must not
// outlast the leases), longer at the start, when none is held yet.
func (e *Executor) renewShards(timeout time.Duration) error {
	c := e.cfg
	ctx, cancel := context.WithTimeout(e.ctx, timeout)
	defer cancel()
	start := c.Clock.Now()
	members, err := c.Lease.JoinExecutors(ctx, c.LeaseHolder, c.LeaseTerm)
	if err != nil {
		return err
	}
	asked := c.Clock.Now()
	leases, now, err := c.Lease.ExecutorLeases(ctx)
	if err != nil {
		return err
	}
	e.learnDatabaseClock(asked, c.Clock.Now(), now)
	d := shard.Decide(members, c.LeaseHolder, leases, now, abandonedAfter*c.LeaseTerm)
	running := e.owned()
	var keys []string
	for _, i := range append(d.Claim, d.GiveUp...) {
		keys = append(keys, shard.ShardKey(i))
	}
	for i, sh := range running { // a shard being handed over is kept until it is released
		if sh.draining && !contains(d.Claim, i) && !contains(d.GiveUp, i) {
			keys = append(keys, shard.ShardKey(i))
		}
	}
	got, err := c.Lease.ClaimLeases(ctx, c.LeaseHolder, keys, c.LeaseTerm)
	if err != nil {
		return err
	}
	e.leaseUntil = start.Add(c.LeaseTerm)
	held := map[int]capstan.Fence{}
	for _, l := range got {
		if i := shard.OfKey(l.Key); i >= 0 && l.ID == c.LeaseHolder {
			held[i] = capstan.Fence{Key: l.Key, Holder: l.ID, Token: l.Token}
		}
	}
	begun := map[int]bool{}
	var lost, regranted []int
	for i, sh := range running {
		f, ok := held[i]
		e.mu.Lock()
		fenced := sh.fenced
		e.mu.Unlock()
		switch {
		case !ok:
			c.Log.Warn("another executor holds this shard now; no longer running its operations", "shard", shard.ShardKey(i))
			lost = append(lost, i)
		case fenced || f != sh.fence:
			// Granted anew meanwhile (it ran out, another held it): the
			// writes under the old grant are refused; resume from what
			// is persisted under the new one.
			regranted = append(regranted, i)
		default:
			sh.window.Extend(e.windowEnd())
		}
	}
	e.endShards(append(lost, regranted...))
	for _, i := range regranted {
		e.beginShard(i, held[i])
		begun[i] = true
	}
	for i, f := range held {
		if _, ok := running[i]; !ok {
			e.beginShard(i, f)
			begun[i] = true
		}
	}
	e.handOver(d.GiveUp)
	if len(begun) > 0 {
		c.Log.Info("running shards", "began", keysOf(begun), "owned", e.Owned())
	}
	// Every renewal also launches what started elsewhere and is not
	// running yet, and once a term every loop reads its operation again:
	// the tailer usually woke them already, but a commit it missed (one
	// that became visible later than its slack) must not leave an
	// operation waiting for good.
	e.renewals++
	if e.renewals%3 == 0 {
		e.wakeAll()
	}
	return e.launchShards(ctx, nil)
}

// wakeAll wakes every operation loop this executor runs.
func (e *Executor) wakeAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.running {
		l.wakeFor(outsideChange)
	}
}

// handOver drains the shards to give up, and releases those drained.
func (e *Executor) handOver(giveUp []int) {
	for _, i := range giveUp {
		e.drainShard(i)
	}
	var released []string
	var done []int
	for i, sh := range e.owned() {
		if !sh.draining {
			continue
		}
		select {
		case <-sh.idle:
		default:
			if e.cfg.Clock.Now().Sub(sh.drainSince) < maxDrain*e.cfg.LeaseTerm {
				continue
			}
			// A loop that cannot step (a store failing it) or a job
			// that runs for hours must not keep the shard from its
			// owner: it is ended, as a lost shard would be.
			e.cfg.Log.Warn("a shard handed over still has work out; ending it", "shard", shard.ShardKey(i))
		}
		done = append(done, i)
		released = append(released, shard.ShardKey(i))
	}
	e.endShards(done)
	if len(released) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(e.ctx, shard.RenewTimeout(e.cfg.LeaseTerm))
	defer cancel()
	if err := e.cfg.Lease.ReleaseLeases(ctx, e.cfg.LeaseHolder, released); err != nil {
		e.cfg.Log.Warn("releasing handed-over shards failed; they expire by themselves", "shards", released, "err", err.Error())
		return
	}
	e.cfg.Log.Info("handed shards over", "shards", released)
}

// releaseAll gives every lease back and withdraws this executor (a clean
// shutdown), so the others need not wait for them to expire.
func (e *Executor) releaseAll(shards []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.cfg.Lease.LeaveExecutors(ctx, e.cfg.LeaseHolder); err != nil {
		e.cfg.Log.Warn("withdrawing this executor failed; it expires by itself", "err", err.Error())
	}
	if err := e.cfg.Lease.ReleaseLeases(ctx, e.cfg.LeaseHolder, shards); err != nil {
		e.cfg.Log.Warn("releasing the executor's leases failed; they expire by themselves", "err", err.Error())
	}
}

func keysOfShards(m map[int]*ownedShard) []int {
	out := make([]int, 0, len(m))
	for i := range m {
		out = append(out, i)
	}
	return out
}

func contains(list []int, i int) bool {
	for _, x := range list {
		if x == i {
			return true
		}
	}
	return false
}

func keysOf(set map[int]bool) []string {
	var out []string
	for i := range set {
		out = append(out, shard.ShardKey(i))
	}
	sort.Strings(out)
	return out
}
