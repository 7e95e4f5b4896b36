package cypher

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

// KeyLookups are the statements that find resources or profiles by their
// unique keys from a list, each with parameters that make it find some,
// for the PROFILE test that holds them to index seeks (given the keys of
// resources that exist, and a profile uid that exists).
func KeyLookups(ukeys []string, profile string) map[string]struct {
	Query  string
	Params map[string]any
} {
	rows := []map[string]any{}
	for _, k := range ukeys {
		rows = append(rows, map[string]any{"ukey": k, "from": k, "to": ukeys[0], "props": map[string]any{},
			"provides": []map[string]any{{"profile": profile, "props": map[string]any{}}}})
	}
	type q = struct {
		Query  string
		Params map[string]any
	}
	return map[string]q{
		"stored resources":     {qResourcesByUkey, map[string]any{"ukeys": ukeys}},
		"drop edges":           {qDropResourceEdges, map[string]any{"ukeys": ukeys}},
		"missing targets":      {qMissingTargets, map[string]any{"targets": ukeys}},
		"relationships":        {relQuery("RUNS_ON"), map[string]any{"rows": rows}},
		"update with provides": {qUpdateResources, map[string]any{"rows": rows}},
		"resources by key":     {qGetResourcesByKey, map[string]any{"ukeys": ukeys}},
	}
}

// ProfileStep commits ch as the step statement does, PROFILEd, on an
// operation this store wrote last (its cursor known), and returns the
// plan with its db hits.
func ProfileStep(ctx context.Context, s *Store, org string, ch *capstan.OperationChange) (neo4j.ProfiledPlan, error) {
	cur, ok := s.cursors.Load(uid(org, ch.Operation.ID))
	if !ok {
		return nil, capstan.Errorf(capstan.EINVALID, "the store has no cursor of operation %s", ch.Operation.ID)
	}
	row, _, err := s.stepRow(ctx, org, ch, cur.(stepCursor), &stepTry{id: capstan.NewID()})
	if err != nil {
		return nil, err
	}
	session := s.driver.NewSession(ctx, neo4j.SessionConfig{})
	defer session.Close(ctx)
	sum, err := session.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		res, err := tx.Run(ctx, "PROFILE "+qApplyStep, map[string]any{"steps": []any{row}})
		if err != nil {
			return nil, err
		}
		return res.Consume(ctx)
	})
	if err != nil {
		return nil, err
	}
	s.cursors.Delete(uid(org, ch.Operation.ID))
	return sum.(neo4j.ResultSummary).Profile(), nil
}

// HoldRequestConnections takes every connection of the store's request
// pool (an open read transaction on each) until release is called.
func HoldRequestConnections(ctx context.Context, s *Store) (release func(), err error) {
	var held []neo4j.SessionWithContext
	release = func() {
		for _, sess := range held {
			sess.Close(ctx)
		}
	}
	for range requestConnections {
		sess := s.session(ctx, neo4j.AccessModeRead)
		held = append(held, sess)
		tx, err := sess.BeginTransaction(ctx)
		if err != nil {
			release()
			return nil, err
		}
		if _, err := tx.Run(ctx, "RETURN 1", nil); err != nil {
			release()
			return nil, err
		}
	}
	return release, nil
}
