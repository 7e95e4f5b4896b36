package cypher_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/packs"
	"github.com/capstan-dev/capstan/service"
)

// TestMigrateOldProvides: a resource whose PROVIDES edge ends at the
// capability (the model before profiles) is found by candidate search
// once a store starts on the database.
func TestMigrateOldProvides(t *testing.T) {
	ctx := context.Background()
	org := "migrate-" + capstan.NewID()[12:]
	s := open(t)
	svc := service.New(s, slog.New(slog.NewTextHandler(io.Discard, nil)))
	admin := capstan.WithActor(ctx, &capstan.Actor{ID: "m", OrganizationID: org, Roles: []string{capstan.RoleAdmin}})
	require.NoError(t, svc.InstallPacks(admin, org, packs.FS, packs.Order))
	r := &capstan.Resource{Type: "s3.bucket", Name: "old", Environment: "prod", LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
		ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "object_storage.s3", Scope: map[string]any{"region": "eu"}}}}
	_, err := s.ImportResources(ctx, org, []*capstan.Resource{r})
	require.NoError(t, err)

	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	require.NoError(t, err)
	defer driver.Close(ctx)
	_, err = neo4j.ExecuteQuery(ctx, driver, `
MATCH (r:Resource {ukey: $ukey})-[p:PROVIDES]->(:Profile)-[:OF]->(c:Capability)
CREATE (r)-[:PROVIDES {capability: c.key, json: p.json, `+"`s:region`"+`: 'eu'}]->(c)
DELETE p`, map[string]any{"ukey": org + "|" + r.Key()}, neo4j.EagerResultTransformer)
	require.NoError(t, err)
	found, err := s.FindCandidates(ctx, org, capstan.CandidateQuery{Capability: "object_storage.s3"})
	require.NoError(t, err)
	require.Zero(t, found.Considered, "the old edge is invisible to the profile model")

	// A database from before profiles is at level 1: a store starting
	// on it runs migration 2.
	_, err = neo4j.ExecuteQuery(ctx, driver, `MERGE (m:CapstanSchema {key: 'capstan'}) SET m.level = 1`, nil, neo4j.EagerResultTransformer)
	require.NoError(t, err)
	fresh := open(t) // a store starting on the database migrates it
	found, err = fresh.FindCandidates(ctx, org, capstan.CandidateQuery{Capability: "object_storage.s3", Constraints: map[string]any{"region": "eu"}})
	require.NoError(t, err)
	require.Equal(t, 1, found.Passing)
	require.Equal(t, "s3.bucket/old", found.Candidates[0].Resource.Key())
	left, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (:Resource {ukey: $ukey})-[p:PROVIDES]->(:Capability) RETURN count(p) AS n`,
		map[string]any{"ukey": org + "|" + r.Key()}, neo4j.EagerResultTransformer)
	require.NoError(t, err)
	require.EqualValues(t, 0, left.Records[0].AsMap()["n"])
}
