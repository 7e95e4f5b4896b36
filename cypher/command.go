package cypher

import (
	"context"
	"encoding/json"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

// qRecordCommand stores a pending command on an operation that has not
// ended and marks it commanded and touched, for its owner's tailer; it
// moves neither the operation's version nor its last sequence, so no step
// conflicts with it. The step that ends the operation sets o.active in
// the same transaction, under the same lock: a command is recorded before
// it (and its loop's last read finds it) or refused after it.
const qRecordCommand = `
MATCH (o:Operation {uid: $op}) WHERE o.active
SET o.commanded = timestamp(), o.touched = timestamp()
CREATE (:OpRecord {op: $op, org: $org, kind: $kind, key: $key, json: $json})
RETURN o.id AS id`

// RecordCommand stores a pending command for the operation's owner.
func (s *Store) RecordCommand(ctx context.Context, org, opID string, c *capstan.Command) error {
	data, err := capstan.CheckCommand(org, opID, c)
	if err != nil {
		return err
	}
	_, err = s.writeOperation(ctx, "cypher.RecordCommand", func(tx neo4j.ManagedTransaction) (any, error) {
		params := map[string]any{"op": uid(org, opID), "org": org, "kind": capstan.RecordCommand, "key": c.ID, "json": string(data)}
		taken, err := exists(ctx, tx, `MATCH (r:OpRecord {op: $op, kind: $kind, key: $key}) RETURN r.key`, params)
		if err != nil {
			return nil, err
		}
		if taken {
			return nil, capstan.Errorf(capstan.ECONFLICT, "command %s is recorded already", c.ID)
		}
		recs, err := collect(ctx, tx, qRecordCommand, params)
		if err != nil {
			return nil, err
		}
		if len(recs) > 0 {
			return nil, nil
		}
		found, err := exists(ctx, tx, `MATCH (o:Operation {uid: $op}) RETURN o.id`, params)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, capstan.NotFound("operation", opID)
		}
		return nil, capstan.Ended(opID)
	})
	return err
}

// GetCommand returns a command of an operation.
func (s *Store) GetCommand(ctx context.Context, org, opID, id string) (*capstan.Command, error) {
	res, err := s.readOne(ctx, "cypher.GetCommand", func(r runner) (any, error) {
		return collect(ctx, r, `MATCH (r:OpRecord {op: $op, kind: $kind, key: $key}) RETURN r.json AS json`,
			map[string]any{"op": uid(org, opID), "kind": capstan.RecordCommand, "key": id})
	})
	if err != nil {
		return nil, err
	}
	recs := res.([]*neo4j.Record)
	if len(recs) == 0 {
		return nil, capstan.NotFound("command", id)
	}
	var c capstan.Command
	if err := json.Unmarshal([]byte(str(recs[0].AsMap()["json"])), &c); err != nil {
		return nil, capstan.Wrap("cypher.GetCommand", err)
	}
	return &c, nil
}
