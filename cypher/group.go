package cypher

import (
	"context"
	"sync"
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
// at the same moment, and reports whether it applied.
func (g *stepGroup) commit(ctx context.Context, s *Store, row map[string]any) (bool, error) {
	me := &groupedStep{row: row, done: make(chan bool, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, me)
	if g.running {
		g.mu.Unlock()
		if lead := <-me.done; !lead {
			return me.applied, me.err
		}
		g.mu.Lock()
	}
	g.running = true
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()

	// The statement is every queued step's, not only the leader's: the
	// leader's leaving (its context ending) must not cut the others'.
	s.runSteps(context.WithoutCancel(ctx), batch)
	s.groupStatements.Add(1)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].done <- true
	} else {
		g.running = false
	}
	g.mu.Unlock()
	return me.applied, me.err
}

// runSteps runs one qApplyStep statement for the batch and tells each
// step its outcome.
func (s *Store) runSteps(ctx context.Context, batch []*groupedStep) {
	rows := make([]map[string]any, len(batch))
	for i, st := range batch {
		rows[i] = st.row
	}
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
}

// GroupStatements counts the statements that committed steps (several
// steps each when they came at once).
func (s *Store) GroupStatements() int64 { return s.groupStatements.Load() }
