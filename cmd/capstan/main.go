// Command capstan is the Capstan control plane: `capstan serve` runs the
// server, `capstan pack lint` checks scenario packs, `capstan watch` follows an
// operation live, `capstan version`
// prints the version. This is the only place that wires adapters together.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stderr)
	case "pack":
		if len(args) < 2 || args[1] != "lint" {
			fmt.Fprintln(stderr, "usage: capstan pack lint PATH...")
			return 2
		}
		return lint(args[2:], stdout, stderr)
	case "cluster":
		if len(args) < 2 || args[1] != "rbac" {
			fmt.Fprintln(stderr, "usage: capstan cluster rbac [--namespace NS] [--service-account NAME]")
			return 2
		}
		return clusterRBAC(args[2:], stdout, stderr)
	case "watch":
		return watch(args[1:], stdout, stderr)
	case "backup":
		return backupCmd(args[1:], stdout, stderr)
	case "restore":
		return restoreCmd(args[1:], stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "capstan %s (%s)\n", buildVersion(), runtime.Version())
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "capstan: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: capstan COMMAND

commands:
  serve           run the server (see capstan serve -h)
  pack lint PATH  check scenario packs (files or directories); exit 1 on any problem
  cluster rbac    print the RBAC grant a cluster needs for the bundled packs (kubectl apply -f -)
  watch OP        follow an operation live (see capstan watch -h)
  backup          write a backup of an organization from a running server (see capstan backup -h)
  restore         load a backup into a store that does not hold its organization (see capstan restore -h)
  version         print the version
`)
}

// buildVersion is the version set at build time (make build sets it from
// git describe), else what the Go toolchain recorded: the module version
// of `go install`, or the commit a source build came from.
func buildVersion() string {
	if version != "dev" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return version
	}
	return "dev-" + rev + dirty
}
