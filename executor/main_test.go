package executor_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/internal/neo4jtest"
	"github.com/capstan-dev/capstan/internal/testenv"
)

var neo4jServer *neo4jtest.Server

func TestMain(m *testing.M) {
	var err error
	neo4jServer, err = neo4jtest.Start(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: Neo4j is part of the test suite and could not start: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	neo4jServer.Close()
	os.Exit(code)
}

// forEachStore runs a test on the embedded store and on Neo4j.
func forEachStore(t *testing.T, fn func(t *testing.T, store capstan.Store)) {
	t.Run("embedded", func(t *testing.T) {
		org = testenv.NewOrg()
		fn(t, testenv.Store(t))
	})
	t.Run("neo4j", func(t *testing.T) {
		org = testenv.NewOrg()
		s, err := cypher.Open(cypher.Config{URI: neo4jServer.URI, User: neo4jServer.User, Password: neo4jServer.Password})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		fn(t, s)
	})
}
