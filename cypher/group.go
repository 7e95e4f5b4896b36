package cypher

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/capstan-dev/capstan/internal/groupcommit"
)

// Group commit across operations. A commit on Neo4j costs a forced write
// of its transaction log, whatever it holds; the steps of different
// operations that come while a step statement runs therefore wait for it
// and then go together, as the rows of one qApplyStep statement (one
// commit), through internal/groupcommit: no added delay for a step that
// finds none running (a lone chain is not slowed). Each row is checked
// on its own (version, last sequence, fence): one that fails writes
// nothing and falls back to the locked path, the others commit.

// stepRow is one step's row of qApplyStep.
type stepRow = map[string]any

// commitStep runs row in a qApplyStep statement shared with the steps
// queued at the same moment, and reports whether it applied.
func (s *Store) commitStep(ctx context.Context, row stepRow) (bool, error) {
	c := s.group.Commit(ctx, row, onePerOperation, func(batch []*groupcommit.Call[stepRow]) {
		// The statement is every queued step's, not only the leader's:
		// the leader's leaving must not cut the others', and it is
		// bounded of its own (a hung connection must not hold every step
		// behind it).
		stmtCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statementBudget)
		defer cancel()
		s.runSteps(stmtCtx, batch)
	}, func(err error) error { return s.mapErr(ctx, "cypher.ApplyOperationChange", err) })
	applied, _ := c.Result.(bool)
	return applied, c.Err
}

// statementBudget bounds one group statement, its retries included.
const statementBudget = retryTime + 30*time.Second

// onePerOperation takes the steps of the next statement from the queue,
// the leader first: at most one step per operation (two rows of one
// operation would both pass the version check of one statement), in
// operation order after the leader's (replicas lock operations in one
// order); the others wait for the next.
func onePerOperation(queue []*groupcommit.Call[stepRow]) (batch, rest []*groupcommit.Call[stepRow]) {
	ops := map[any]bool{}
	for _, c := range queue {
		if op := c.Item["op"]; !ops[op] {
			ops[op] = true
			batch = append(batch, c)
			continue
		}
		rest = append(rest, c)
	}
	slices.SortStableFunc(batch[1:], func(a, b *groupcommit.Call[stepRow]) int {
		return strings.Compare(str(a.Item["op"]), str(b.Item["op"]))
	})
	return batch, rest
}

// runSteps runs one qApplyStep statement for the batch and sets each
// step's outcome: whether it applied, or the statement's error.
func (s *Store) runSteps(ctx context.Context, batch []*groupcommit.Call[stepRow]) {
	rows := make([]map[string]any, len(batch))
	for i, c := range batch {
		rows[i] = c.Item
	}
	res, err := s.writeOperationStatement(ctx, "cypher.ApplyOperationChange", func(r runner) (any, error) {
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
	for i, c := range batch {
		c.Err = err
		c.Result = err == nil && applied[str(rows[i]["op"])]
	}
}

// GroupStatements counts the statements that committed steps (several
// steps each when they came at once).
func (s *Store) GroupStatements() int64 { return s.group.Commits() }
