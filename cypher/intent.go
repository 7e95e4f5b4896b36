package cypher

import (
	"context"
	"encoding/json"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

const qCreateIntent = `
CREATE (i:Intent {uid: $uid, org: $org, id: $id, status: $status, version: $version, json: $json})`

const qIntentVersion = `MATCH (i:Intent {uid: $uid}) SET i.locked = true REMOVE i.locked RETURN i.version AS version, i.json AS json`

const qUpdateIntent = `
MATCH (i:Intent {uid: $uid})
SET i.status = $status, i.version = $version, i.json = $json`

// CreateIntent stores a new intent.
func (s *Store) CreateIntent(ctx context.Context, org string, i *capstan.Intent) error {
	if err := capstan.CheckIntentWrite(org, i); err != nil {
		return err
	}
	c := *i
	s.touch(&c.Meta, org, true)
	data, err := json.Marshal(&c)
	if err != nil {
		return capstan.Wrap("cypher.CreateIntent", err)
	}
	_, err = s.write(ctx, "cypher.CreateIntent", func(tx neo4j.ManagedTransaction) (any, error) {
		return tx.Run(ctx, qCreateIntent, map[string]any{"uid": uid(org, c.ID), "org": org, "id": c.ID, "status": string(c.Status), "version": c.Version, "json": string(data)})
	})
	if err == nil {
		i.Meta = c.Meta
	}
	return err
}

// UpdateIntent writes i when its version is current.
func (s *Store) UpdateIntent(ctx context.Context, org string, i *capstan.Intent) error {
	if err := capstan.CheckIntentWrite(org, i); err != nil {
		return err
	}
	res, err := s.write(ctx, "cypher.UpdateIntent", func(tx neo4j.ManagedTransaction) (any, error) {
		return s.putIntent(ctx, tx, org, i)
	})
	if err == nil {
		i.Meta = res.(capstan.Meta)
	}
	return err
}

// putIntent writes i inside tx after checking its version; it returns the
// new Meta and leaves i untouched, so a retried transaction starts over.
func (s *Store) putIntent(ctx context.Context, tx neo4j.ManagedTransaction, org string, i *capstan.Intent) (capstan.Meta, error) {
	m, err := checkVersion(ctx, tx, "intent", i.ID, uid(org, i.ID), i.Version, qIntentVersion)
	if err != nil {
		return capstan.Meta{}, err
	}
	var old capstan.Intent
	if err := json.Unmarshal([]byte(str(m["json"])), &old); err != nil {
		return capstan.Meta{}, err
	}
	c := *i
	c.Meta.CreatedAt = old.CreatedAt
	s.touch(&c.Meta, org, false)
	data, err := json.Marshal(&c)
	if err != nil {
		return capstan.Meta{}, err
	}
	_, err = tx.Run(ctx, qUpdateIntent, map[string]any{"uid": uid(org, i.ID), "status": string(c.Status), "version": c.Version, "json": string(data)})
	return c.Meta, err
}

// GetIntent returns an intent by id.
func (s *Store) GetIntent(ctx context.Context, org, id string) (*capstan.Intent, error) {
	res, err := s.readOne(ctx, "cypher.GetIntent", func(tx runner) (any, error) {
		return queryJSON[capstan.Intent](ctx, tx, `MATCH (i:Intent {uid: $uid}) RETURN i.json AS json`, map[string]any{"uid": uid(org, id)})
	})
	if err != nil {
		return nil, err
	}
	list := res.([]*capstan.Intent)
	if len(list) == 0 {
		return nil, capstan.NotFound("intent", id)
	}
	return list[0], nil
}

const qIntentFilter = `
MATCH (i:Intent) WHERE i.org = $org AND ($status = '' OR i.status = $status)`

// ListIntents returns a page of intents ordered by id.
func (s *Store) ListIntents(ctx context.Context, org string, f capstan.IntentFilter) ([]*capstan.Intent, int, error) {
	params := map[string]any{"org": org, "status": string(f.Status), "after": f.After, "limit": capstan.LimitOr(f.Limit, 100)}
	return listPage[capstan.Intent](s, ctx, "cypher.ListIntents",
		qIntentFilter+` AND i.id > $after RETURN i.json AS json ORDER BY i.id LIMIT $limit`, qIntentFilter+` RETURN count(i) AS total`, params)
}
