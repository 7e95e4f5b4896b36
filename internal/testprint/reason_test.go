package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReasonIsWhyATestFailedInALine(t *testing.T) {
	for _, c := range []struct {
		name, output, want string
	}{
		{"t.Fatalf", "=== RUN   TestX\n    x_test.go:12: the operation did not end\n--- FAIL: TestX (1.00s)\n", "x_test.go:12: the operation did not end"},
		{"testify", "=== RUN   TestX\n    crash_sweep_test.go:420: \n" +
			"        \tError Trace:\t/work/cmd/capstan/crash_sweep_test.go:420\n" +
			"        \tError:      \tShould be true\n" +
			"        \tTest:       \tTestX/commit-18\n" +
			"        \tMessages:   \tcommit 18 was never reached (17 commits)\n" +
			"    x_test.go:99: a server's log\n--- FAIL: TestX (1.00s)\n",
			"crash_sweep_test.go:420: Should be true: commit 18 was never reached (17 commits)"},
		{"a message on the next lines", "    x_test.go:7: \n        the replicas are not ready\n        and more\n", "x_test.go:7: the replicas are not ready"},
		{"t.Fatalf after t.Logf, before a cleanup's log", "    x_test.go:10: SIGKILL the owner\n    x_test.go:11: taken over in 3s\n" +
			"    x_test.go:20: a subscriber never completed\n    process_test.go:140: the server of /tmp/x said last:\n        {}\n",
			"x_test.go:20: a subscriber never completed"},
		{"its subtests failed", "=== RUN   TestX\n=== PAUSE TestX\n=== CONT  TestX\n--- FAIL: TestX (0.01s)\n", ""},
		{"a long message is cut", "    x_test.go:1: " + strings.Repeat("a", 1000) + "\n", "x_test.go:1: " + strings.Repeat("a", whyWidth-len("x_test.go:1: ")) + "…"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, reason(c.output))
		})
	}
}
