package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// tally counts the tests of a run by how they ended and keeps how long
// each top-level one took. A subtest counts apart: a table of a hundred
// rows is one test of a hundred subtests.
type tally struct {
	passed, failed, skipped int
	subtests                int
	times                   []timed
	failures                []failure
}

// failure is a failed test's own output, its first and last lines, and
// why it failed in a line.
type failure struct {
	name, tail, why string
}

// A failed test shows its first and last lines at the end: the first
// usually hold the failed assertion, the last what its cleanups logged
// (the server's log, say).
const (
	failureHead = 20
	failureTail = 40
)

// failure keeps the first and last lines of a failed test's own output.
func (t *tally) failure(name, output string) {
	lines := strings.Split(strings.TrimRight(output, "\n"), "\n")
	if n := len(lines); n > failureHead+failureTail {
		cut := fmt.Sprintf("[… %d lines …]", n-failureHead-failureTail)
		lines = append(append(lines[:failureHead:failureHead], cut), lines[n-failureTail:]...)
	}
	t.failures = append(t.failures, failure{name: name, tail: strings.Join(lines, "\n") + "\n", why: reason(output)})
}

type timed struct {
	name    string
	elapsed float64
}

func (t *tally) count(e event) {
	if e.Test == "" {
		return
	}
	if strings.Contains(e.Test, "/") {
		t.subtests++
		return
	}
	switch e.Action {
	case "pass":
		t.passed++
	case "fail":
		t.failed++
	case "skip":
		t.skipped++
	}
	if e.Action != "skip" {
		t.times = append(t.times, timed{name: e.Package + " " + e.Test, elapsed: e.Elapsed})
	}
}

// print says how many tests passed, failed and were skipped, then the
// slowest ones, slowest first.
func (t *tally) print(out io.Writer) {
	if t.passed+t.failed+t.skipped == 0 {
		return
	}
	fmt.Fprintf(out, "%d passed, %d failed, %d skipped (and %d subtests)\n", t.passed, t.failed, t.skipped, t.subtests)
	slices.SortStableFunc(t.times, func(a, b timed) int {
		switch {
		case a.elapsed > b.elapsed:
			return -1
		case a.elapsed < b.elapsed:
			return 1
		}
		return 0
	})
	if len(t.times) > slowest {
		t.times = t.times[:slowest]
	}
	fmt.Fprintf(out, "the %d slowest tests:\n", len(t.times))
	for _, x := range t.times {
		fmt.Fprintf(out, "  %7.1fs %s\n", x.elapsed, x.name)
	}
	for _, f := range t.failures {
		fmt.Fprintf(out, "--- FAIL %s, its first and last lines:\n%s", f.name, f.tail)
	}
	// Last, a line per failed test: a CI log cut to its end still says
	// why each failed (a test whose subtests failed has no line of its own).
	if len(t.failures) > 0 {
		fmt.Fprintln(out, "why each test failed:")
	}
	for _, f := range t.failures {
		if f.why != "" {
			fmt.Fprintf(out, "  %s: %s\n", f.name, f.why)
		}
	}
}
