package cypher

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/capstan-dev/capstan"
)

// Group commit across operations. A commit on Neo4j costs a forced write
// of its transaction log, whatever it holds; the steps of different
// operations that come while a step statement runs therefore wait for it
// and then go together, as the rows of one qApplyStep statement (one
// commit). There is no added delay: a step that finds none running goes
// at once (a lone chain is not slowed); the first one queued behind a
// running statement leads the next, with every step queued by then. Each
// row is checked on its own (version, last sequence, fence): one that
// fails writes nothing and falls back to the locked path, the others
// commit.

// stepGroup queues the steps waiting for the running statement.
type stepGroup struct {
	mu      sync.Mutex
	running bool
	queue   []*groupedStep
}

type groupedStep struct {
	row     map[string]any
	applied bool
	err     error
	done    chan bool // true: lead the next statement; false: done (applied, err set)
}

// commit runs row in a qApplyStep statement shared with the steps queued
// at the same moment, and reports whether it applied. A step still
// queued when its context ends leaves the queue; one taken into a
// statement waits for its outcome (it may have committed).
func (g *stepGroup) commit(ctx context.Context, s *Store, row map[string]any) (bool, error) {
	me := &groupedStep{row: row, done: make(chan bool, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, me)
	if g.running {
		g.mu.Unlock()
		select {
		case lead := <-me.done:
			if !lead {
				return me.applied, me.err
			}
		case <-ctx.Done():
			if !g.leave(me) {
				return false, s.mapErr(ctx, "cypher.ApplyOperationChange", ctx.Err())
			}
			if lead := <-me.done; !lead { // taken into a statement, or given the lead
				return me.applied, me.err
			}
		}
		g.mu.Lock()
	}
	g.running = true
	batch := g.take()
	g.mu.Unlock()
	defer g.handOff()
	// The statement is every queued step's, not only the leader's: the
	// leader's leaving must not cut the others', and it is bounded of
	// its own (a hung connection must not hold every step behind it).
	stmtCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statementBudget)
	defer cancel()
	s.runSteps(stmtCtx, batch)
	s.groupStatements.Add(1)
	return me.applied, me.err
}

// leave takes a step whose context ended out of the queue, and reports
// false when it did; true means the step was already taken into a
// statement or given the lead (handOff picks under g.mu), and must wait
// for its outcome or lead.
func (g *stepGroup) leave(me *groupedStep) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(me.done) > 0 {
		return true
	}
	i := slices.Index(g.queue, me)
	if i < 0 {
		return true
	}
	g.queue = slices.Delete(g.queue, i, i+1)
	return false
}

// statementBudget bounds one group statement, its retries included.
const statementBudget = retryTime + 30*time.Second

// take removes from the queue the steps of the next statement, the
// leader first: at most one step per operation (two rows of one operation
// would both pass the version check of one statement), in operation
// order after the leader's (replicas lock operations in one order). g.mu
// is held.
func (g *stepGroup) take() []*groupedStep {
	var batch, rest []*groupedStep
	ops := map[any]bool{}
	for _, st := range g.queue {
		if op := st.row["op"]; !ops[op] {
			ops[op] = true
			batch = append(batch, st)
			continue
		}
		rest = append(rest, st)
	}
	g.queue = rest
	slices.SortStableFunc(batch[1:], func(a, b *groupedStep) int {
		return strings.Compare(str(a.row["op"]), str(b.row["op"]))
	})
	return batch
}

// handOff lets the first step queued lead the next statement, or ends
// the run; it runs even when the statement panicked, so the queue never
// stalls.
func (g *stepGroup) handOff() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) > 0 {
		g.queue[0].done <- true
		return
	}
	g.running = false
}

// runSteps runs one qApplyStep statement for the batch and tells each
// step its outcome.
func (s *Store) runSteps(ctx context.Context, batch []*groupedStep) {
	rows := make([]map[string]any, len(batch))
	for i, st := range batch {
		rows[i] = st.row
	}
	answered := false
	defer func() { // a panic below still answers every step
		if !answered {
			for _, st := range batch[1:] {
				st.err = capstan.Errorf(capstan.EINTERNAL, "the statement of this step failed")
				st.done <- false
			}
		}
	}()
	res, err := s.writeStatement(ctx, "cypher.ApplyOperationChange", func(r runner) (any, error) {
		recs, err := collect(ctx, r, qApplyStep, map[string]any{"steps": rows})
		if err != nil {
			return nil, err
		}
		applied := map[string]bool{}
		for _, rec := range recs {
			applied[str(rec.AsMap()["op"])] = true
		}
		return applied, nil
	})
	applied, _ := res.(map[string]bool)
	for i, st := range batch {
		st.err = err
		st.applied = err == nil && applied[str(rows[i]["op"])]
		if i > 0 { // the leader reads its own outcome
			st.done <- false
		}
	}
	answered = true
}

// GroupStatements counts the statements that committed steps (several
// steps each when they came at once).
func (s *Store) GroupStatements() int64 { return s.groupStatements.Load() }
