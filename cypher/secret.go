package cypher

import (
	"context"
	"encoding/json"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/secret"
)

// Secrets are kept here, sealed, when replicas share this database
// (secret.DBStore seals and opens them; this store never sees a value):
// one :Secret node per organization and name, its sealed values newest
// first, and one :SecretGeneration node per organization, moved on with
// every change so that each replica's vault knows when to rebuild its
// redactor.

// PutSecretRecord puts v first in the record of org's secret name,
// keeping at most keep values, and moves the organization's generation on.
func (s *Store) PutSecretRecord(ctx context.Context, org, name string, v secret.SealedValue, keep int) error {
	if err := capstan.CheckOrg(org); err != nil {
		return err
	}
	_, err := s.write(ctx, "cypher.PutSecret", func(tx neo4j.ManagedTransaction) (any, error) {
		old, err := collect(ctx, tx, `MERGE (s:Secret {uid: $uid}) SET s.locked = true REMOVE s.locked RETURN s.json AS json`, map[string]any{"uid": uid(org, name)})
		if err != nil {
			return nil, err
		}
		var values []secret.SealedValue
		if len(old) > 0 && str(old[0].AsMap()["json"]) != "" {
			if err := json.Unmarshal([]byte(str(old[0].AsMap()["json"])), &values); err != nil {
				return nil, err
			}
		}
		values = append([]secret.SealedValue{v}, values...)
		values = values[:min(len(values), keep)]
		data, _ := json.Marshal(values)
		_, err = collect(ctx, tx, `MATCH (s:Secret {uid: $uid}) SET s.org = $org, s.name = $name, s.json = $json
MERGE (g:SecretGeneration {org: $org}) SET g.gen = coalesce(g.gen, 0) + 1`, map[string]any{"uid": uid(org, name), "org": org, "name": name, "json": string(data)})
		return nil, err
	})
	return err
}

// SecretRecord is a secret's sealed values, newest first (nil: none).
func (s *Store) SecretRecord(ctx context.Context, org, name string) ([]secret.SealedValue, error) {
	recs, err := s.secretRows(ctx, `MATCH (s:Secret {uid: $uid}) RETURN s.name AS name, s.json AS json`, map[string]any{"uid": uid(org, name)})
	return recs[name], err
}

// SecretRecords are every record of an organization, by name.
func (s *Store) SecretRecords(ctx context.Context, org string) (map[string][]secret.SealedValue, error) {
	return s.secretRows(ctx, `MATCH (s:Secret) WHERE s.org = $org RETURN s.name AS name, s.json AS json`, map[string]any{"org": org})
}

// SecretGeneration changes whenever a secret of org does.
func (s *Store) SecretGeneration(ctx context.Context, org string) (int64, error) {
	res, err := s.readOne(ctx, "cypher.SecretGeneration", func(r runner) (any, error) {
		recs, err := collect(ctx, r, `OPTIONAL MATCH (g:SecretGeneration {org: $org}) RETURN coalesce(g.gen, 0) AS gen`, map[string]any{"org": org})
		if err != nil || len(recs) == 0 {
			return int64(0), err
		}
		return i64(recs[0].AsMap()["gen"]), nil
	})
	if err != nil {
		return 0, err
	}
	return res.(int64), nil
}

// AnySecretRecord is some record of any organization (the key check).
func (s *Store) AnySecretRecord(ctx context.Context) (string, string, []secret.SealedValue, error) {
	res, err := s.readOne(ctx, "cypher.AnySecretRecord", func(r runner) (any, error) {
		return collect(ctx, r, `MATCH (s:Secret) WHERE s.json IS NOT NULL RETURN s.org AS org, s.name AS name, s.json AS json LIMIT 1`, nil)
	})
	if err != nil {
		return "", "", nil, err
	}
	recs := res.([]*neo4j.Record)
	if len(recs) == 0 {
		return "", "", nil, nil
	}
	m := recs[0].AsMap()
	var values []secret.SealedValue
	if err := json.Unmarshal([]byte(str(m["json"])), &values); err != nil {
		return "", "", nil, capstan.Wrap("cypher.AnySecretRecord", err)
	}
	return str(m["org"]), str(m["name"]), values, nil
}

func (s *Store) secretRows(ctx context.Context, q string, params map[string]any) (map[string][]secret.SealedValue, error) {
	res, err := s.readOne(ctx, "cypher.SecretRecords", func(r runner) (any, error) {
		recs, err := collect(ctx, r, q, params)
		if err != nil {
			return nil, err
		}
		out := map[string][]secret.SealedValue{}
		for _, rec := range recs {
			m := rec.AsMap()
			var values []secret.SealedValue
			if err := json.Unmarshal([]byte(str(m["json"])), &values); err != nil {
				return nil, err
			}
			out[str(m["name"])] = values
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return res.(map[string][]secret.SealedValue), nil
}
