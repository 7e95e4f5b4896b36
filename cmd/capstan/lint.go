package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/pack"
	"github.com/capstan-dev/capstan/packs"
)

// lint checks packs at paths and prints every problem as file:line: message.
// Packs may use the capabilities the bundled packs define.
func lint(paths []string, stdout, stderr io.Writer) int {
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "usage: capstan pack lint PATH...")
		return 2
	}
	bundled, problems := pack.LoadSet(packs.FS, packs.Order, nil)
	if len(problems) > 0 {
		fmt.Fprintln(stderr, "capstan: bundled packs are broken:", problems)
		return 1
	}
	known := map[string]*capstan.CapabilityDefinition{}
	for _, p := range bundled {
		for i := range p.Capabilities {
			known[p.Capabilities[i].Key] = &p.Capabilities[i]
		}
	}
	failed := false
	for _, path := range expandPackDirs(paths) {
		abs, err := filepath.Abs(path)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", path, err)
			failed = true
			continue
		}
		dir, base := filepath.Split(abs)
		p, probs := pack.LoadFS(os.DirFS(dir), base, known)
		for _, pr := range probs {
			pr.File = filepath.Join(filepath.Dir(path), rel(base, pr.File))
			fmt.Fprintln(stdout, pr.String())
		}
		if len(probs) > 0 {
			failed = true
			continue
		}
		fmt.Fprintf(stdout, "%s: ok: %s (%d scenarios, digest %s)\n", path, p.Ref(), len(p.Scenarios), p.Digest[:12])
	}
	if failed {
		return 1
	}
	return 0
}

// expandPackDirs replaces a directory that is not a pack itself (it has
// no pack.yaml) with the packs in it: its pack directories and its YAML
// files, in name order. `capstan pack lint packs/` lints the bundled packs.
func expandPackDirs(paths []string) []string {
	var out []string
	for _, path := range paths {
		entries, err := os.ReadDir(path)
		if err != nil {
			out = append(out, path) // a file, or an error lint reports
			continue
		}
		if _, err := os.Stat(filepath.Join(path, "pack.yaml")); err == nil {
			out = append(out, path)
			continue
		}
		found := false
		for _, e := range entries {
			full := filepath.Join(path, e.Name())
			if e.IsDir() {
				if _, err := os.Stat(filepath.Join(full, "pack.yaml")); err == nil {
					out, found = append(out, full), true
				}
			} else if ext := filepath.Ext(e.Name()); ext == ".yaml" || ext == ".yml" {
				out, found = append(out, full), true
			}
		}
		if !found {
			out = append(out, path) // lint says what is missing
		}
	}
	return out
}

// rel keeps the problem's path relative to what the user typed.
func rel(base, file string) string {
	if r, err := filepath.Rel(filepath.Dir(base), file); err == nil {
		return r
	}
	return file
}
