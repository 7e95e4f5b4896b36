package capstan_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	"github.com/stretchr/testify/require"
)

// TestTheDockerContextHoldsTheBuildAndNothingElse reads .dockerignore with
// the matcher Docker itself uses (moby/patternmatcher): every file the
// image's `go build ./cmd/capstan` compiles or embeds is sent, and
// node_modules, build output and local data never are. No Docker engine is
// needed to hold that.
func TestTheDockerContextHoldsTheBuildAndNothingElse(t *testing.T) {
	f, err := os.Open(".dockerignore")
	require.NoError(t, err)
	patterns, err := ignorefile.ReadAll(f)
	f.Close()
	require.NoError(t, err)
	m, err := patternmatcher.New(patterns)
	require.NoError(t, err)
	ignored := func(rel string) bool {
		skip, err := m.MatchesOrParentMatches(filepath.ToSlash(rel))
		require.NoError(t, err)
		return skip
	}

	// What the build reads: each package's Go and embedded files, and the module files.
	out, err := exec.Command("go", "list", "-deps", "-json=Dir,GoFiles,EmbedFiles,Module", "./cmd/capstan").Output()
	require.NoError(t, err)
	root, err := os.Getwd()
	require.NoError(t, err)
	needed := []string{"go.mod", "go.sum", "Dockerfile"}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			Dir                 string
			GoFiles, EmbedFiles []string
			Module              *struct{ Main bool }
		}
		require.NoError(t, dec.Decode(&p))
		if p.Module == nil || !p.Module.Main {
			continue // the standard library and modules: go mod download
		}
		rel, err := filepath.Rel(root, p.Dir)
		require.NoError(t, err)
		for _, name := range append(p.GoFiles, p.EmbedFiles...) {
			needed = append(needed, filepath.Join(rel, name))
		}
	}
	require.Greater(t, len(needed), 100)
	for _, n := range needed {
		require.False(t, ignored(n), "%s is needed by the build but not sent", n)
	}

	// What must never be sent, whether or not it exists here.
	for _, n := range []string{"web/console/node_modules/react/index.js", "web/livetest/node_modules/x", "node_modules/x",
		"bin/capstan", "data/capstan.db", "data/dev-token", ".git/HEAD", "cmd/capstan/capstan.test", "cpu.out",
		"mydata/dev-token", "mydata/capstan.db", ".env", "deploy/.env.prod", "deploy/tokens.prod.yaml"} {
		require.True(t, ignored(n), "%s would be sent to the build", n)
	}

	// And what is sent here is small: sources, packs and the built console.
	var size int64
	require.NoError(t, filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == "." {
			return err
		}
		if ignored(path) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			size += info.Size()
		}
		return nil
	}))
	require.Less(t, size, int64(64<<20), "the build context is %d bytes", size)
	t.Logf("build context: %.1f MB", float64(size)/(1<<20))
}
