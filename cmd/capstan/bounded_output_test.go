package main_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// peakRSS is the process's high-water resident set (VmHWM) in bytes.
func peakRSS(t testing.TB, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// loudPack has a shell job printing `shellBytes` and an http job reading
// an endless body from url.
func loudPack(shellBytes int64, url string) string {
	return fmt.Sprintf(`id: loud
version: 1.0.0
scenarios:
  - id: thing.loud
    action: install
    target_resource_type: thing
    plan:
      nodes:
        - id: shout
          type: job
          title: Shout
          job:
            run:
              runner: shell
              script: head -c %d /dev/zero | tr '\0' 'x'
            outputs: {evidence: [{name: done, type: command, script: 'true'}]}
        - id: download
          type: job
          title: Download
          after: [shout]
          job:
            run: {runner: http, method: GET, url: %q}
            outputs: {evidence: [{name: done, type: command, script: 'true'}]}
`, shellBytes, url)
}

// TestAttackJobOutputIsBounded: a job printing 1 GiB and an http job
// whose answer never ends cost the server what it keeps of an output
// (64 KiB), not their size — in memory and in the diagnostics log.
func TestAttackJobOutputIsBounded(t *testing.T) {
	t.Parallel()
	const printed = 1 << 30
	body, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan int64, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("y", 1<<20))
		var n int64
		defer func() { served <- n }()
		for n < 1<<30 { // a gigabyte, unless the reader stops first
			m, err := w.Write(chunk)
			n += int64(m)
			if err != nil {
				return
			}
		}
	})}
	go srv.Serve(body)
	t.Cleanup(func() { srv.Close() })

	dir := t.TempDir()
	packs := filepath.Join(dir, "packs")
	require.NoError(t, os.MkdirAll(packs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(packs, "loud.yaml"), []byte(loudPack(printed, "http://"+body.Addr().String()+"/endless")), 0o644))
	data := filepath.Join(dir, "data")
	p := start(t, data, "--packs", packs, "--egress-allow", "127.0.0.1/32")
	healthy := p.gql(t, `{ viewer { actor } }`, nil)
	require.NotNil(t, healthy)
	before := peakRSS(t, p.cmd.Process.Pid)

	op, err := runQuiet(p, "thing", "loud")
	require.NoError(t, err)
	waitForEnd(t, p, op)
	require.Equal(t, "SUCCEEDED", status(t, p, op))

	after := peakRSS(t, p.cmd.Process.Pid)
	t.Logf("peak RSS %d MiB before, %d MiB after a job printed %d MiB and an http job met an endless body", before>>20, after>>20, printed>>20)
	require.Less(t, after-before, int64(64<<20), "the server's memory grew with the job's output")
	require.Less(t, <-served, int64(16<<20), "the http runner read on past what it keeps")

	logs, err := filepath.Glob(filepath.Join(data, "executor", "artifacts", "*", "diagnostics.log"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	info, err := os.Stat(logs[0])
	require.NoError(t, err)
	require.Less(t, info.Size(), int64(1<<20), "the diagnostics log kept more than the bounded output")
	log, err := os.ReadFile(logs[0])
	require.NoError(t, err)
	require.Contains(t, string(log), fmt.Sprintf("[capstan: %d more bytes dropped]", printed-65536))
	require.Contains(t, string(log), "[capstan: the rest of the body was not read]")
}

// TestAttackSandboxesDoNotPileUp: a job that fills its sandbox up to the
// disk quota leaves nothing behind once its operation ended, and a
// sandbox a crash left behind is removed by the next start.
func TestAttackSandboxesDoNotPileUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	packs := filepath.Join(dir, "packs")
	require.NoError(t, os.MkdirAll(packs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(packs, "fill.yaml"), []byte(`id: fill
version: 1.0.0
scenarios:
  - id: thing.fill
    action: install
    target_resource_type: thing
    plan:
      nodes:
        - id: fill
          type: job
          title: Fill the sandbox
          job:
            run: {runner: shell, script: 'mkdir -p deep/er && head -c 67108864 /dev/zero > deep/er/blob && chmod 000 deep/er deep'}
            outputs: {evidence: [{name: done, type: command, script: 'true'}]}
`), 0o644))
	data := filepath.Join(dir, "data")
	sandboxes := filepath.Join(jobsOf(data), "sandbox")
	left := filepath.Join(sandboxes, "op-a-crash-left-behind")
	require.NoError(t, os.MkdirAll(filepath.Join(left, "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(left, "x", "blob"), make([]byte, 1<<20), 0o644))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(left, old, old))

	p := start(t, data, "--packs", packs)
	_, err := os.Stat(left)
	require.True(t, os.IsNotExist(err), "the sandbox a crash left behind is still there")
	for i := range 3 {
		op, err := runQuiet(p, "thing", fmt.Sprintf("fill-%d", i))
		require.NoError(t, err)
		waitForEnd(t, p, op)
		require.Equal(t, "SUCCEEDED", status(t, p, op))
	}
	// The loop removes a sandbox as it ends, just after the commit that
	// ended the operation: a reader may see the status a moment before.
	require.Eventually(t, func() bool {
		entries, err := os.ReadDir(sandboxes)
		return err == nil && len(entries) == 0
	}, 10*time.Second, 20*time.Millisecond, "finished operations' sandboxes stay on disk")
}
