package cypher

import (
	"context"
	"encoding/json"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

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
