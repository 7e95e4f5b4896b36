package main_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// unprivileged makes a directory tree the uid nobody (65534) may use and
// a copy of the binary it may run.
func unprivileged(t *testing.T) (dir, bin string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the isolation tests start the server as another user: run them as root (CI does)")
	}
	dir = varLibDir(t, "capstan-nobody-")
	require.NoError(t, os.Chmod(dir, 0o755))
	bin = filepath.Join(dir, "capstan")
	data, err := os.ReadFile(binary)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	return dir, bin
}

// varLibDir is a new directory in /var/lib, removed after the test:
// outside /tmp, which a job gets fresh anyway, so that what hides the
// server's files from a job is the sandbox's own doing.
func varLibDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/lib", prefix)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func asNobody(bin string) func(*exec.Cmd) {
	return func(cmd *exec.Cmd) {
		cmd.Path = bin
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	}
}

// snoopPack's job tries what a hostile pack author would against a
// server that is not root: its data directory, the secret store's key,
// the tokens, the mounts hiding them, capabilities.
func snoopPack(data, tokens, open string) string {
	return fmt.Sprintf(`id: snoop
version: 1.0.0
scenarios:
  - id: thing.snoop
    action: install
    target_resource_type: thing
    plan:
      nodes:
        - id: snoop
          type: job
          title: Snoop
          job:
            run:
              runner: shell
              script: |
                echo "== id"; id
                echo "== data"; ls -la %[1]q 2>&1; od -An -c %[1]q/secrets/secret.key 2>&1 | head -3
                echo "== tokens"; cat %[2]q 2>&1
                echo "== umount"; umount %[1]q 2>&1 && echo "UNMOUNTED-$((40+2))"; ls %[1]q/secrets 2>&1
                echo "== plant"; echo planted > %[3]q/planted 2>&1 && echo "PLANTED-$((40+2))"
                unshare -Urm sh -c 'umount %[1]q && echo "UNMOUNTED-$((40+3))"; mount -o remount,bind,rw / && echo planted > %[3]q/planted && echo "PLANTED-$((40+3))"' 2>&1
                echo "== caps"; grep Cap /proc/self/status
                echo "== procs"; ls /proc | grep -cE '^[0-9]+$'
                echo "== mounts"; cat /proc/self/mountinfo; echo "== end of mounts"
                exit 0
            outputs: {evidence: [{name: done, type: command, script: 'true'}]}
  - id: probe.check
    action: install
    target_resource_type: probe
    plan:
      nodes:
        - id: check
          type: verification
          title: A command probe
          probes: [{name: looks, type: command, script: 'true'}]
  - id: stash.hide
    action: install
    target_resource_type: stash
    plan:
      nodes:
        - id: hide
          type: job
          title: Hide a directory from the disk quota
          job:
            run:
              runner: shell
              script: |
                mkdir -p stash/deeper && head -c 8M /dev/zero > stash/deeper/big && chmod 000 stash
                sleep 10
            outputs: {evidence: [{name: done, type: command, script: 'true'}]}
            controls: {retry: {maximum_attempts: 1}}
`, data, tokens, open)
}

// TestAttackUnprivilegedServer runs the server as nobody, as the shipped
// container does (USER capstan): jobs run in a user namespace of their
// own, in which the data directory, the secret store's key and the
// tokens are hidden and cannot be uncovered.
func TestAttackUnprivilegedServer(t *testing.T) {
	t.Parallel()
	dir, bin := unprivileged(t)
	data := filepath.Join(dir, "data")
	require.NoError(t, os.MkdirAll(data, 0o700))
	require.NoError(t, os.Chown(data, 65534, 65534))
	tokens := filepath.Join(dir, "tokens.yaml")
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf("tokens:\n  - {token: %q, actor: alice, organization: acme, roles: [admin]}\n", attackAdmin)), 0o644))
	packs := filepath.Join(dir, "packs")
	require.NoError(t, os.MkdirAll(packs, 0o755))
	open := filepath.Join(dir, "open") // anyone may write here: a job may not
	require.NoError(t, os.MkdirAll(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(packs, "snoop.yaml"), []byte(snoopPack(data, tokens, open)), 0o644))

	p := launchWith(t, asNobody(bin), data, "--tokens", tokens, "--packs", packs, "--job-disk-quota-mib", "16")
	p.waitReady(t, 60*time.Second)
	require.Contains(t, p.output(), "a user namespace per job", "the server says how it isolates jobs")
	op, err := runAs(p, attackAdmin, "thing", "snoop")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return statusAs(t, p, attackAdmin, op) == "SUCCEEDED" }, 30*time.Second, 100*time.Millisecond)

	text := onlyDiagnostics(t, data)
	require.Contains(t, text, "== caps", "the job ran: %s", text)
	dump, err := exec.Command("sh", "-c", "od -An -c "+filepath.Join(data, "secrets", "secret.key")+" | head -1").Output()
	require.NoError(t, err)
	require.NotEmpty(t, strings.TrimSpace(string(dump)))
	require.Contains(t, text, "== plant", "the job got that far: %s", text)
	for _, leak := range []string{attackAdmin, "UNMOUNTED-42", "UNMOUNTED-43", "PLANTED-42", "PLANTED-43", "capstan.db", strings.TrimSpace(string(dump))} {
		require.NotContains(t, text, leak, text)
	}
	_, err = os.Stat(filepath.Join(open, "planted"))
	require.True(t, os.IsNotExist(err), "the job wrote outside its sandbox")
	mountTableNamesNothingOfTheServer(t, text, data, tokens)
	require.Contains(t, text, "CapEff:\t0000000000000000", "the job holds no capability")
	require.Contains(t, text, "CapBnd:\t0000000000000000", "nor can it gain one")
	t.Logf("what the job saw:\n%s", text)

	// A directory the server (the job's own uid, not root) cannot read
	// does not hide what it holds from the disk quota. The job writes 8
	// MiB, under the 16 MiB quota, so the locked directory alone is what
	// the quota refuses, however slowly the job runs.
	op, err = runAs(p, attackAdmin, "stash", "hide")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return statusAs(t, p, attackAdmin, op) == "FAILED" }, 30*time.Second, 100*time.Millisecond)
	r := postAs(t, p, attackAdmin, `query($id: ID!) { operation(id: $id) { nodeRuns { error } } }`, map[string]any{"id": op})
	require.Empty(t, r.Errors)
	require.Contains(t, fmt.Sprint(r.Data), "holds a directory its disk quota cannot measure (stash)")
	// The loop removes the sandbox once it has committed the end.
	require.Eventually(t, func() bool {
		stashes, err := filepath.Glob(filepath.Join(jobsOf(data), "sandbox", "*", "stash"))
		return err == nil && len(stashes) == 0
	}, 20*time.Second, 50*time.Millisecond, "the sandbox went with its operation, locked directory and all")
}

// mountTableNamesNothingOfTheServer: the mount table the snoop job
// printed (a bind mount's line names the path it came from, whatever
// namespace reads it) names neither the data directory nor the tokens.
func mountTableNamesNothingOfTheServer(t *testing.T, text, data, tokens string) {
	t.Helper()
	_, mounts, ok := strings.Cut(text, "== mounts\n")
	require.True(t, ok, "the job read its mount table: %s", text)
	mounts, _, ok = strings.Cut(mounts, "== end of mounts")
	require.True(t, ok, "the job read its mount table: %s", text)
	require.Contains(t, mounts, " /tmp/job ", "the table is the job's: %s", mounts)
	require.Contains(t, mounts, jobsOf(data), "its directories come from the job directory")
	for _, path := range []string{data, tokens, filepath.Dir(data)} {
		require.NotContains(t, mounts, path, "the mount table names %s", path)
	}
}

// TestAJobsMountTableNamesNothingOfTheServer: as root, the server binds
// each job's directories from the job directory, which is not in the
// data directory: the job's mount table names neither it nor the tokens.
func TestAJobsMountTableNamesNothingOfTheServer(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the sandbox's user switch and namespaces need the server to run as root (CI does)")
	}
	dir := varLibDir(t, "capstan-mounts-")
	data, tokens, packs, open := filepath.Join(dir, "data"), filepath.Join(dir, "tokens.yaml"), filepath.Join(dir, "packs"), filepath.Join(dir, "open")
	for _, d := range []string{packs, open} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf("tokens:\n  - {token: %q, actor: alice, organization: acme, roles: [admin]}\n", attackAdmin)), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(packs, "snoop.yaml"), []byte(snoopPack(data, tokens, open)), 0o644))

	p := launch(t, data, "--tokens", tokens, "--packs", packs)
	p.waitReady(t, 60*time.Second)
	op, err := runAs(p, attackAdmin, "thing", "snoop")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return statusAs(t, p, attackAdmin, op) == "SUCCEEDED" }, 30*time.Second, 100*time.Millisecond)
	text := onlyDiagnostics(t, data)
	require.NotContains(t, text, attackAdmin)
	mountTableNamesNothingOfTheServer(t, text, data, tokens)
}

// onlyDiagnostics is what the jobs of the server whose data directory is
// data printed, from the diagnostics log of its one operation.
func onlyDiagnostics(t *testing.T, data string) string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(data, "executor", "artifacts", "*", "diagnostics.log"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	out, err := os.ReadFile(logs[0])
	require.NoError(t, err)
	return string(out)
}

// TestUnisolatedJobsAreRefused: where jobs cannot be isolated
// (--sandbox off here; a server that is neither root nor allowed user
// namespaces takes the same path), shell jobs fail with a typed refusal,
// the server says so at start and in /readyz, and only
// --allow-unisolated-jobs runs them.
func TestUnisolatedJobsAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	packs := filepath.Join(dir, "packs")
	require.NoError(t, os.MkdirAll(packs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(packs, "snoop.yaml"), []byte(snoopPack(filepath.Join(dir, "data"), filepath.Join(dir, "none"), t.TempDir())), 0o644))

	p := start(t, filepath.Join(dir, "data"), "--packs", packs, "--sandbox", "off")
	require.Contains(t, p.output(), "jobs cannot be isolated")
	resp, err := http.Get(p.url + "/readyz")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "jobs: shell jobs and command probes are refused")
	op, err := runQuiet(p, "thing", "refused")
	require.NoError(t, err)
	waitForEnd(t, p, op)
	require.Equal(t, "FAILED", status(t, p, op))
	got := p.gql(t, `query($id: ID!) { operation(id: $id) { nodeRuns { node status attempts error } } }`, map[string]any{"id": op})
	run := got["operation"].(map[string]any)["nodeRuns"].([]any)[0].(map[string]any)
	require.Contains(t, run["error"], "cannot be isolated")
	require.Contains(t, run["error"], "--allow-unisolated-jobs")
	require.Equal(t, float64(1), run["attempts"], "a refusal is not retried")
	// A command probe is refused the same way, and its evidence says why.
	op, err = runQuiet(p, "probe", "refused")
	require.NoError(t, err)
	waitForEnd(t, p, op)
	got = p.gql(t, `query($id: ID!) { operation(id: $id) { evidence { item result source } } }`, map[string]any{"id": op})
	ev := got["operation"].(map[string]any)["evidence"].([]any)
	require.NotEmpty(t, ev)
	last := ev[len(ev)-1].(map[string]any)
	require.Equal(t, "FAILED", last["result"])
	require.Equal(t, "unisolated", last["source"].(map[string]any)["error_kind"], "%v", last)
	require.Contains(t, last["source"].(map[string]any)["note"], "cannot be isolated")
	p.stop(t)

	allowed := start(t, filepath.Join(dir, "data2"), "--packs", packs, "--sandbox", "off", "--allow-unisolated-jobs")
	require.True(t, strings.Contains(allowed.output(), "jobs run unisolated"), allowed.output())
	op, err = runQuiet(allowed, "thing", "allowed")
	require.NoError(t, err)
	waitForEnd(t, allowed, op)
	require.Equal(t, "SUCCEEDED", status(t, allowed, op))
}

// statusAs is an operation's status, read with bearer.
func statusAs(t *testing.T, p *proc, bearer, op string) string {
	r := postAs(t, p, bearer, `query($id: ID!) { operation(id: $id) { status } }`, map[string]any{"id": op})
	require.Empty(t, r.Errors)
	return r.Data["operation"].(map[string]any)["status"].(string)
}

// TestAJobDirThatWouldNameTheDataIsRefused: serve refuses a --job-dir in
// the data directory or holding it (a job's mount table would name it),
// and one that others may write, typed, before it serves anything.
func TestAJobDirThatWouldNameTheDataIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, open := filepath.Join(dir, "data"), filepath.Join(dir, "open")
	require.NoError(t, os.Mkdir(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777))
	for _, c := range []struct{ jobDir, want string }{
		{filepath.Join(data, "jobs"), "must lie outside the data directory"},
		{dir, "must lie outside the data directory"},
		{open, "may be written by others (mode 0777)"},
	} {
		out, err := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--data-dir", data, "--job-dir", c.jobDir).CombinedOutput()
		require.Error(t, err, "%s", out)
		require.Contains(t, string(out), "INVALID: ", "typed")
		require.Contains(t, string(out), c.want)
	}
}
