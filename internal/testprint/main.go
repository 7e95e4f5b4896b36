// Command testprint reads `go test -json` and shows a test run as it goes:
// a line when a package's tests start, one when they end (ok or FAIL with
// the time), the whole output of a package that failed, and build errors.
// Lines the Neo4j helpers print to announce a slow step (a first download)
// are shown at once. At the end it counts the tests (`N passed, N failed,
// N skipped`) and names the slowest, so a regression in time is seen the
// day it lands. Then come the failed tests' own lines (the first and last
// of each), and last a line per failed test with the check that failed
// and its message, so that the end of a long log, even cut short, says
// why, not only what, failed. `make test` pipes the suite through it.
//
//	go test -json ./... | go run ./internal/testprint
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

func main() {
	failed, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprint:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// announcements are prefixes of output lines shown as soon as they come.
var announcements = []string{"run.sh:", "neo4jtest:"}

// slowest is how many of the slowest tests the summary names.
const slowest = 15

func run(in io.Reader, out io.Writer) (failed bool, err error) {
	output := map[string]*strings.Builder{}    // per package, shown if it fails
	failedTests := map[string][]string{}       // per package, named again after its output
	ownOutput := map[string]*strings.Builder{} // per running test, kept if it fails
	var t tally
	defer func() { t.print(out) }()
	var began time.Time // the first event's: a package's line says when, into the run, it ended
	at := func(e event) string {
		if began.IsZero() || e.Time.IsZero() {
			return ""
		}
		return fmt.Sprintf(" (at %s)", e.Time.Sub(began).Round(time.Second))
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Fprintln(out, sc.Text()) // not an event: go test's own message
			continue
		}
		if began.IsZero() && !e.Time.IsZero() {
			began = e.Time
		}
		switch e.Action {
		case "start":
			fmt.Fprintf(out, "▶ %s\n", e.Package)
		case "build-output":
			fmt.Fprint(out, e.Output)
		case "build-fail":
			failed = true
		case "output":
			if output[e.Package] == nil {
				output[e.Package] = &strings.Builder{}
			}
			output[e.Package].WriteString(e.Output)
			if e.Test != "" {
				name := e.Package + " " + e.Test
				if ownOutput[name] == nil {
					ownOutput[name] = &strings.Builder{}
				}
				ownOutput[name].WriteString(e.Output)
			}
			for _, p := range announcements {
				if strings.HasPrefix(strings.TrimSpace(e.Output), p) {
					fmt.Fprintf(out, "  %s", e.Output)
				}
			}
		case "pass", "skip":
			t.count(e)
			delete(ownOutput, e.Package+" "+e.Test)
			if e.Test == "" {
				fmt.Fprintf(out, "ok   %s %.1fs%s\n", e.Package, e.Elapsed, at(e))
				delete(output, e.Package)
			}
		case "fail":
			t.count(e)
			if e.Test != "" {
				failedTests[e.Package] = append(failedTests[e.Package], e.Test)
				name := e.Package + " " + e.Test
				if b := ownOutput[name]; b != nil {
					t.failure(name, b.String())
				}
				delete(ownOutput, name)
				continue
			}
			failed = true
			var all string
			if b := output[e.Package]; b != nil {
				all = b.String()
				fmt.Fprint(out, all)
			}
			// A timeout's goroutine dump can bury what failed: say it
			// again last, where a log's tail shows it.
			fmt.Fprint(out, summary(failedTests[e.Package], all))
			fmt.Fprintf(out, "FAIL %s %.1fs%s\n", e.Package, e.Elapsed, at(e))
			delete(output, e.Package)
			delete(failedTests, e.Package)
		}
	}
	return failed, sc.Err()
}

// summary names a failed package's failed tests and, after a timeout, the
// tests that were still running (the lines under "running tests:").
func summary(tests []string, output string) string {
	var b strings.Builder
	if len(tests) > 0 {
		fmt.Fprintf(&b, "failed tests: %s\n", strings.Join(tests, ", "))
	}
	if _, after, ok := strings.Cut(output, "running tests:\n"); ok {
		b.WriteString("still running at the timeout:\n")
		for _, line := range strings.Split(after, "\n") {
			if !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, "    ") {
				break
			}
			b.WriteString("  " + strings.TrimSpace(line) + "\n")
		}
	}
	return b.String()
}
