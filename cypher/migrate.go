package cypher

import (
	"context"
	"encoding/json"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

type migration struct {
	capstan.Migration
	run func(s *Store, ctx context.Context) error
}

// migrations are the Neo4j store's, in order; a new one goes at the end
// with the next level, and is never changed once released. Replicas
// starting at once may run the same migration together: each is
// idempotent, and the level only grows.
var migrations = []migration{
	{capstan.Migration{Level: 1, Name: "schema", Does: "creates the uniqueness constraints and indexes every lookup uses, and drops those of earlier models (schema.go)"},
		(*Store).applySchema},
	{capstan.Migration{Level: 2, Name: "profiles", Does: "links each resource's provided capabilities to :Profile nodes, rewriting the resources stored before profiles from their JSON"},
		(*Store).migrateProvides},
}

// Migrations lists the Neo4j store's migrations.
func Migrations() []capstan.Migration {
	out := make([]capstan.Migration, len(migrations))
	for i, m := range migrations {
		out[i] = m.Migration
	}
	return out
}

const (
	// Replicas migrating a new database at once can each MERGE the level
	// node before either commits (no constraint guards it): the level is
	// the highest any of them recorded.
	qSchemaLevel    = `OPTIONAL MATCH (m:CapstanSchema {key: 'capstan'}) RETURN coalesce(max(m.level), 0) AS level`
	qSetSchemaLevel = `MERGE (m:CapstanSchema {key: 'capstan'})
SET m.level = CASE WHEN coalesce(m.level, 0) < $level THEN $level ELSE m.level END`
)

// SchemaLevel is the level of the last migration the database ran.
func (s *Store) SchemaLevel(ctx context.Context) (int, error) {
	if err := s.ready(ctx); err != nil {
		return 0, err
	}
	return s.schemaLevel(ctx)
}

func (s *Store) schemaLevel(ctx context.Context) (int, error) {
	sess := s.session(ctx, neo4j.AccessModeRead)
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, qSchemaLevel, nil)
	if err != nil {
		return 0, s.mapErr(ctx, "cypher.SchemaLevel", err)
	}
	rec, err := res.Single(ctx)
	if err != nil {
		return 0, s.mapErr(ctx, "cypher.SchemaLevel", err)
	}
	return int(i64(rec.AsMap()["level"])), nil
}

// migrate runs the migrations above the database's level, recording
// each as it ends.
func (s *Store) migrate(ctx context.Context) error {
	level, err := s.schemaLevel(ctx)
	if err != nil {
		return err
	}
	if err := capstan.CheckSchemaLevel("neo4j", level, Migrations()); err != nil {
		return err
	}
	for _, m := range migrations[level:] {
		if err := m.run(s, ctx); err != nil {
			return err
		}
		sess := s.session(ctx, neo4j.AccessModeWrite)
		res, err := sess.Run(ctx, qSetSchemaLevel, map[string]any{"level": m.Level})
		if err == nil {
			_, err = res.Consume(ctx)
		}
		sess.Close(ctx)
		if err != nil {
			return s.mapErr(ctx, "cypher.migrate", err)
		}
		s.log.Info("neo4j: migrated", "level", m.Level, "migration", m.Name)
	}
	return nil
}

// qOldProvides finds resources written by a store before profiles: their
// PROVIDES edges end at the :Capability node itself. Walking in from the
// capabilities costs a degree check per capability when there are none.
const qOldProvides = `
MATCH (c:Capability) WHERE COUNT { (c)<-[:PROVIDES]-() } > 0
MATCH (c)<-[:PROVIDES]-(r:Resource)
WITH DISTINCT r LIMIT 500
RETURN r.org AS org, r.ukey AS ukey, r.json AS json`

// migrateProvides rewrites, at startup, the edges of resources stored in
// the model before profiles (docs/NEO4J.md): each such resource is written
// again from its JSON, as an update that keeps its version, so its
// provided capabilities link to profiles. Batches commit one at a time;
// a crash in between leaves the rest for the next start.
func (s *Store) migrateProvides(ctx context.Context) error {
	sess := s.session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	for {
		n, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
			recs, err := collect(ctx, tx, qOldProvides, nil)
			if err != nil {
				return 0, err
			}
			byOrg := map[string][]*capstan.Resource{}
			ukeys := map[string][]string{}
			for _, rec := range recs {
				m := rec.AsMap()
				r := new(capstan.Resource)
				if err := json.Unmarshal([]byte(str(m["json"])), r); err != nil {
					return 0, capstan.Wrap("cypher.migrateProvides", err)
				}
				org := str(m["org"])
				byOrg[org] = append(byOrg[org], r)
				ukeys[org] = append(ukeys[org], str(m["ukey"]))
			}
			for org, rs := range byOrg {
				if err := writeResources(ctx, tx, org, rs, ukeys[org]); err != nil {
					return 0, err
				}
			}
			return len(recs), nil
		})
		if err != nil {
			return s.mapErr(ctx, "cypher.migrateProvides", err)
		}
		if n.(int) == 0 {
			return nil
		}
		s.log.Info("neo4j: linked provided capabilities to profiles", "resources", n)
	}
}
