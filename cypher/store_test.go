package cypher_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/internal/neo4jtest"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/storetest"
)

var server *neo4jtest.Server

func TestMain(m *testing.M) {
	var err error
	server, err = neo4jtest.Start(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: Neo4j is part of the test suite and could not start: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := server.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping Neo4j: %v\n", err)
	}
	os.Exit(code)
}

func open(t testing.TB) *cypher.Store {
	t.Helper()
	s, err := cypher.Open(cypher.Config{URI: server.URI, User: server.User, Password: server.Password})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) capstan.Store { return open(t) })
}

func TestUnreadableOperation(t *testing.T) {
	ctx := context.Background()
	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	require.NoError(t, err)
	t.Cleanup(func() { driver.Close(ctx) })
	// Its operations end with the test: an executor started on this
	// database later (another package's tests) has nothing of it to resume.
	t.Cleanup(func() {
		_, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (o:Operation) WHERE o.org STARTS WITH 'damaged-' DETACH DELETE o`, nil, neo4j.EagerResultTransformer)
		require.NoError(t, err)
	})
	storetest.UnreadableOperation(t, open(t), func(t *testing.T, org, id string) {
		_, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (o:Operation {uid: $uid}) SET o.json = '{damaged'`,
			map[string]any{"uid": org + "|" + id}, neo4j.EagerResultTransformer)
		require.NoError(t, err)
	})
}

// TestTwoPatchesOnOneBase runs the races of governed change on Neo4j.
func TestTwoPatchesOnOneBase(t *testing.T) {
	testenv.TwoPatchesOnOneBase(t, open(t), testenv.NewOrg())
}

// TestTimelineNewsSaysWhereTheOperationIs: what a tailer on another
// replica reads of an operation says where it is (live.Tailer reads on).
func TestTimelineNewsSaysWhereTheOperationIs(t *testing.T) {
	s := open(t)
	storetest.TimelineNewsSaysWhereTheOperationIs(t, s, s)
}
