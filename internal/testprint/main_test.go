package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunShowsPackagesAndFailures(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"a"}`,
		`{"Action":"output","Package":"a","Output":"run.sh: Neo4j 5.26 is not cached yet: fetching it once\n"}`,
		`{"Action":"output","Package":"a","Test":"TestX","Output":"noise\n"}`,
		`{"Action":"pass","Package":"a","Elapsed":1.5}`,
		`{"Action":"start","Package":"b"}`,
		`{"Action":"output","Package":"b","Test":"TestY","Output":"    b_test.go:9: boom\n"}`,
		`{"Action":"fail","Package":"b","Test":"TestY"}`,
		`{"Action":"fail","Package":"b","Elapsed":2}`,
	}, "\n")
	got, failed := printed(t, in)
	require.True(t, failed)
	require.Contains(t, got, "▶ a\n  run.sh: Neo4j 5.26 is not cached yet")
	require.Contains(t, got, "ok   a 1.5s")
	require.NotContains(t, got, "noise", "a passing package's output is not shown")
	require.Contains(t, got, "b_test.go:9: boom\nfailed tests: TestY\nFAIL b 2.0s")
}

func TestATimeoutNamesWhatWasRunningLast(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"c"}`,
		`{"Action":"output","Package":"c","Output":"panic: test timed out after 30m0s\n"}`,
		`{"Action":"output","Package":"c","Output":"running tests:\n"}`,
		`{"Action":"output","Package":"c","Output":"\tTestStuck (29m59s)\n"}`,
		`{"Action":"output","Package":"c","Output":"\ngoroutine 1 [running]:\nlots of stack\n"}`,
		`{"Action":"fail","Package":"c","Elapsed":1800}`,
	}, "\n")
	got, _ := printed(t, in)
	require.True(t, strings.HasSuffix(got, "lots of stack\nstill running at the timeout:\n  TestStuck (29m59s)\nFAIL c 1800.0s\n"), got)
}

func TestTheRunEndsWithCountsAndTheSlowestTests(t *testing.T) {
	lines := []string{`{"Action":"start","Package":"p"}`}
	for i := 1; i <= 20; i++ {
		lines = append(lines, fmt.Sprintf(`{"Action":"pass","Package":"p","Test":"Test%02d","Elapsed":%d}`, i, i))
	}
	lines = append(lines,
		`{"Action":"pass","Package":"p","Test":"Test20/row","Elapsed":19}`,
		`{"Action":"skip","Package":"p","Test":"TestSkipped","Elapsed":0}`,
		`{"Action":"fail","Package":"p","Test":"TestBroken","Elapsed":0.5}`,
		`{"Action":"fail","Package":"p","Elapsed":300}`)
	got, failed := printed(t, strings.Join(lines, "\n"))
	require.True(t, failed)
	require.Contains(t, got, "20 passed, 1 failed, 1 skipped (and 1 subtests)\nthe 15 slowest tests:\n     20.0s p Test20\n     19.0s p Test19\n")
	require.Contains(t, got, "      6.0s p Test06\n")
	require.NotContains(t, got, "p Test05\n", "fifteen, no more")
	require.NotContains(t, got, "Test20/row", "subtests are not timed apart")
}

func TestAPackageSaysWhenItEnded(t *testing.T) {
	in := strings.Join([]string{
		`{"Time":"2026-12-06T10:00:00Z","Action":"start","Package":"a"}`,
		`{"Time":"2026-12-06T10:02:05Z","Action":"pass","Package":"a","Elapsed":125}`,
	}, "\n")
	got, _ := printed(t, in)
	require.Contains(t, got, "ok   a 125.0s (at 2m5s)\n")
}

func TestTheRunEndsWithWhyEachTestFailed(t *testing.T) {
	lines := []string{`{"Action":"start","Package":"p"}`}
	for i := range 70 {
		lines = append(lines, fmt.Sprintf(`{"Action":"output","Package":"p","Test":"TestBroken","Output":"line %d\n"}`, i))
	}
	lines = append(lines,
		`{"Action":"output","Package":"p","Test":"TestFine","Output":"fine\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestFine","Elapsed":1}`,
		`{"Action":"output","Package":"p","Test":"TestBroken","Output":"    x_test.go:3: expected 54, actual 46\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestBroken","Elapsed":2}`,
		`{"Action":"fail","Package":"p","Elapsed":3}`,
		`{"Action":"start","Package":"q"}`,
		`{"Action":"pass","Package":"q","Test":"TestLater","Elapsed":1}`,
		`{"Action":"pass","Package":"q","Elapsed":1}`)
	got, _ := printed(t, strings.Join(lines, "\n"))
	_, tail, ok := strings.Cut(got, "the 3 slowest tests:")
	require.True(t, ok, got)
	require.Contains(t, tail, "--- FAIL p TestBroken, its first and last lines:\nline 0\n")
	require.Contains(t, tail, "line 19\n[… 11 lines …]\nline 31\n")
	require.True(t, strings.HasSuffix(tail, "line 69\n    x_test.go:3: expected 54, actual 46\n"+
		"why each test failed:\n  p TestBroken: x_test.go:3: expected 54, actual 46\n"), tail)
	require.NotContains(t, tail, "line 20\n", "twenty first lines and forty last, no more")
	require.NotContains(t, tail, "line 30\n", "twenty first lines and forty last, no more")
	require.NotContains(t, tail, "fine", "a passing test's lines are not repeated")
}

// printed is what testprint prints for the events in, and whether it
// reports a failure.
func printed(t *testing.T, in string) (string, bool) {
	t.Helper()
	var out strings.Builder
	failed, err := run(strings.NewReader(in), &out)
	require.NoError(t, err)
	return out.String(), failed
}
