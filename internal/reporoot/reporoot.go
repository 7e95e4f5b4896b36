// Package reporoot finds the repository's root, for the test helpers
// that run its scripts (scripts/neo4j/run.sh, scripts/testhosts.sh). It
// walks up from the working directory — a test's is its package's
// directory, `go run`'s the caller's — to the go.mod of this module. It
// does not read the source file's path (runtime.Caller): make test builds
// with -trimpath, so that a fresh clone reuses the build cache, and a
// trimmed path names the module, not a directory.
package reporoot

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Module is the module whose root Dir finds.
const Module = "github.com/capstan-dev/capstan"

// Dir is the repository's root: the nearest directory at or above the
// working directory whose go.mod declares Module.
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if declares(filepath.Join(dir, "go.mod"), Module) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("reporoot: no go.mod of " + Module + " at or above the working directory")
		}
		dir = parent
	}
}

// declares reports whether the go.mod at path declares module.
func declares(path, module string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(name) == module
		}
	}
	return false
}
