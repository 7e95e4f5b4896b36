package main_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/embedded"
	"github.com/capstan-dev/capstan/internal/graphdump"
	"github.com/capstan-dev/capstan/internal/neo4jtest"
)

const (
	upgradeAdmin = "upgrade-admin-token-0123456789"
	upgradeSRE   = "upgrade-sre-token-0123456789"
)

// TestTheLastReleasesDataOpensAndResumes opens every release's upgrade
// fixtures (testdata/upgrade/TAG, written by that release's own binary
// with scripts/release-fixtures.sh) with this build: an embedded data
// directory and a Neo4j graph, each left by a SIGKILL with an operation
// at its gate, one in the middle of a job and one finished. The store
// migrates to this build's level, the secret still opens, and the two
// operations in flight finish.
func TestTheLastReleasesDataOpensAndResumes(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "testdata", "upgrade")
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	var tags []string
	for _, e := range entries {
		if e.IsDir() {
			tags = append(tags, e.Name())
		}
	}
	require.NotEmpty(t, tags, "testdata/upgrade holds the last release's fixtures")
	packs := t.TempDir()
	pack, err := os.ReadFile(filepath.Join(root, "pack.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(packs, "pack.yaml"), pack, 0o600))
	tokens := filepath.Join(root, "tokens.yaml")

	for _, tag := range tags {
		t.Run(tag+"/embedded", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			untar(t, filepath.Join(root, tag, "embedded.tar.gz"), dir)
			p := start(t, dir, "--tokens", tokens, "--packs", packs, "--secret-key-file", filepath.Join(dir, "secrets", "secret.key"))
			resumes(t, p, fixtureOps(t, filepath.Join(root, tag, "embedded.json")), len(embedded.Migrations()))
		})
		t.Run(tag+"/neo4j", func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, err := neo4jtest.Start(ctx) // emptied for this test: the fixture's graph is all it holds
			require.NoError(t, err, "Neo4j is part of the test suite")
			t.Cleanup(func() { db.Close() })
			driver, err := neo4j.NewDriverWithContext(db.URI, db.Auth())
			require.NoError(t, err)
			defer driver.Close(ctx)
			f, err := os.Open(filepath.Join(root, tag, "neo4j.jsonl.gz"))
			require.NoError(t, err)
			defer f.Close()
			zr, err := gzip.NewReader(f)
			require.NoError(t, err)
			require.NoError(t, graphdump.Import(ctx, driver, "", zr))

			p := start(t, t.TempDir(), "--tokens", tokens, "--packs", packs, "--store", "neo4j", "--neo4j-uri", db.URI)
			resumes(t, p, fixtureOps(t, filepath.Join(root, tag, "neo4j.json")), len(cypher.Migrations()))
		})
	}
}

// resumes checks a server on a release's data: migrated to level, the
// secret there, the finished operation as it was, the others finished
// once their gates are approved.
func resumes(t *testing.T, p *proc, ops map[string]string, level int) {
	secrets := p.gqlAs(t, upgradeAdmin, `{ secrets { name } }`)
	require.Contains(t, fmt.Sprint(secrets), "registry-token")
	status := func(op string) string {
		got := p.gqlAs(t, upgradeAdmin, fmt.Sprintf(`{ operation(id: %q) { status } }`, op))
		return got["operation"].(map[string]any)["status"].(string)
	}
	require.Equal(t, "SUCCEEDED", status(ops["finished"]))
	deadline := time.Now().Add(120 * time.Second)
	for _, role := range []string{"waiting", "working"} {
		for st := status(ops[role]); st != "SUCCEEDED"; st = status(ops[role]) {
			require.True(t, time.Now().Before(deadline), "the %s operation did not finish (%s):\n%s", role, st, p.output())
			require.NotContains(t, []string{"FAILED", "CANCELLED", "ROLLED_BACK"}, st, "the %s operation:\n%s", role, p.output())
			if st == "WAITING" {
				_, _ = postQuiet(p, upgradeSRE, `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve", approve: true}) { status } }`, map[string]any{"op": ops[role]})
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The store is at this build's level: a backup says so.
	file := filepath.Join(t.TempDir(), "after-upgrade.backup")
	out := capstanCmd(t, nil, "backup", "--server", p.url, "--token", upgradeAdmin, "--to", file)
	require.Contains(t, out, fmt.Sprintf("at schema %d", level), out)
}

func fixtureOps(t *testing.T, path string) map[string]string {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var f struct{ Operations map[string]string }
	require.NoError(t, json.Unmarshal(data, &f))
	require.Len(t, f.Operations, 3)
	return f.Operations
}

// untar extracts a fixture's gzipped tar into dir.
func untar(t *testing.T, path, dir string) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return
		}
		require.NoError(t, err)
		require.False(t, strings.Contains(hdr.Name, ".."), hdr.Name)
		target := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(target, os.FileMode(hdr.Mode).Perm()|0o700))
		case tar.TypeReg:
			require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o750))
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(hdr.Mode).Perm())
			require.NoError(t, err)
			_, err = io.Copy(out, tr)
			require.NoError(t, err)
			require.NoError(t, out.Close())
		}
	}
}
