package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/backup"
	"github.com/capstan-dev/capstan/internal/neo4jtest"
)

// backupPack's operation works for a moment, waits for an approval, then
// works again: a backup taken while several run holds operations in
// every one of those places.
const backupPack = `id: backup-test
version: 1.0.0
resource_types:
  - {key: backup.thing, display_name: Backup thing, allowed_actions: [install]}
scenarios:
  - id: backup.thing.install
    action: install
    target_resource_type: backup.thing
    plan:
      nodes:
        - id: work
          type: job
          title: Work a moment
          job:
            run: {runner: shell, script: 'sleep 0.5; touch worked'}
            outputs: {evidence: [{name: worked, type: command, script: 'test -f worked'}]}
            controls: {idempotent: true}
        - id: approve
          type: gate
          title: Approve
          after: [work]
          gate: {type: approval, reason: Go on, required_roles: [sre], approvals: 1}
        - id: finish
          type: job
          title: Finish
          after: [approve]
          job:
            run: {runner: shell, script: 'touch finished'}
            outputs: {evidence: [{name: finished, type: command, script: 'test -f finished'}]}
            controls: {idempotent: true}
`

const (
	backupAdmin  = "backup-admin-token-0123456789"
	backupSRE    = "backup-sre-token-0123456789"
	backupViewer = "backup-viewer-token-0123456789"
)

// backupServer starts a server for org with the backup pack on the
// store extra names, sharing dir's tokens file and secret key.
func backupServer(t *testing.T, dir, tokens, packs, key string, extra ...string) *proc {
	return start(t, dir, append([]string{"--tokens", tokens, "--packs", packs, "--secret-key-file", key}, extra...)...)
}

// TestABackupUnderLoadRestoresOntoTheOtherStore takes a backup with
// `capstan backup` from a server on the embedded store while its
// operations run and intents are being written, restores it with
// `capstan restore` onto Neo4j, and starts a server there: the
// operations that were running go on and finish, with their secret.
// Then the same the other way, Neo4j to a new embedded store.
func TestABackupUnderLoadRestoresOntoTheOtherStore(t *testing.T) {
	t.Parallel()
	db, err := neo4jtest.Start(context.Background())
	require.NoError(t, err, "Neo4j is part of the test suite")
	t.Cleanup(func() { db.Close() })

	org := "backup-" + capstan.NewID()[14:]
	shared := t.TempDir()
	tokens := tokensFile(t, shared, "alice "+org+" admin "+backupAdmin, "sam "+org+" sre "+backupSRE, "vic "+org+" viewer "+backupViewer)
	packs := filepath.Join(shared, "packs")
	require.NoError(t, os.MkdirAll(packs, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(packs, "backup.yaml"), []byte(backupPack), 0o600))
	// The suite's servers on Neo4j share one key (launchWith): the
	// source's key file holds it too, as a deployment moving to Neo4j
	// would carry its key over.
	key := filepath.Join(shared, "secret.key")
	require.NoError(t, os.WriteFile(key, []byte(testSecretKey), 0o600))

	src := backupServer(t, t.TempDir(), tokens, packs, key)
	_, errs := src.tryAs(t, backupAdmin, `mutation { putSecret(input: {name: "registry-token", value: "a-registry-token-of-the-test"}) { name } }`, nil)
	require.Empty(t, errs)
	var ops []string
	for i := range 6 {
		ops = append(ops, startBackupOp(t, src, fmt.Sprintf("thing-%d", i)))
		time.Sleep(150 * time.Millisecond) // spread: some working, some waiting
	}
	waitFor(t, 30*time.Second, func() bool { return countStatus(t, src, ops, "WAITING") >= 2 }, "some operations wait for approval")

	// Load while the backup is taken: intents written as fast as one
	// client can.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = postQuiet(src, backupAdmin, `mutation($n: String!) { createIntent(input: {action: "install", targetResourceType: "backup.thing", desiredResult: {name: $n}, constraints: {environment: "staging"}}) { id } }`, map[string]any{"n": fmt.Sprintf("load-%d", i)})
		}
	}()
	file := filepath.Join(t.TempDir(), "one.backup")
	out := capstanCmd(t, nil, "backup", "--server", src.url, "--token", backupAdmin, "--to", file)
	close(stop)
	wg.Wait()
	require.Contains(t, out, "backup of organization "+org)
	require.Contains(t, out, "from the embedded store")

	// Who may take one, and what a refused one leaves.
	refused := filepath.Join(t.TempDir(), "viewer.backup")
	out, code := capstanTry(nil, "backup", "--server", src.url, "--token", backupViewer, "--to", refused)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "FORBIDDEN")
	require.NoFileExists(t, refused)
	resp, err := http.Get(src.url + "/admin/backup")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	out, code = capstanTry(nil, "backup", "--server", src.url, "--token", backupAdmin, "--to", file)
	require.Equal(t, 1, code, "an existing file is never overwritten: %s", out)

	// The backup caught operations in flight.
	statuses := backupStatuses(t, file)
	require.Len(t, statuses, len(ops))
	inFlight := 0
	for _, st := range statuses {
		if st != capstan.OperationSucceeded {
			inFlight++
		}
	}
	require.Positive(t, inFlight, "the backup holds operations in flight: %v", statuses)
	t.Logf("the backup holds %v", statuses)
	src.kill()

	// Restore onto Neo4j: the secret key must be the source's.
	out, code = capstanTry(nil, "restore", "--from", file, "--store", "neo4j", "--neo4j-uri", db.URI, "--secret-key-file", filepath.Join(t.TempDir(), "absent.key"))
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "give the key of the server that took the backup")
	out = capstanCmd(t, nil, "restore", "--from", file, "--store", "neo4j", "--neo4j-uri", db.URI, "--secret-key-file", key)
	require.Contains(t, out, "organization "+org+" restored into the neo4j store")
	out, code = capstanTry(nil, "restore", "--from", file, "--store", "neo4j", "--neo4j-uri", db.URI, "--secret-key-file", key)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "already holds organization "+org)

	dst := backupServer(t, t.TempDir(), tokens, packs, key, "--store", "neo4j", "--neo4j-uri", db.URI)
	secrets := dst.gqlAs(t, backupAdmin, `{ secrets { name } }`)
	require.Contains(t, fmt.Sprint(secrets), "registry-token", "the secret came along, sealed")
	finishAll(t, dst, ops)

	// And back: from the server on Neo4j to a new embedded store.
	again := filepath.Join(t.TempDir(), "two.backup")
	out = capstanCmd(t, nil, "backup", "--server", dst.url, "--token", backupAdmin, "--to", again)
	require.Contains(t, out, "from the neo4j store")
	dst.stop(t)
	dataDir := t.TempDir()
	out = capstanCmd(t, nil, "restore", "--from", again, "--store", "embedded", "--data-dir", dataDir, "--secret-key-file", key)
	require.Contains(t, out, "restored into the embedded store")
	back := backupServer(t, dataDir, tokens, packs, key)
	for _, op := range ops {
		require.Equal(t, "SUCCEEDED", operationStatus(t, back, op), "%s came back finished (it was %s in the first backup)", op, statuses[op])
	}
	secrets = back.gqlAs(t, backupAdmin, `{ secrets { name } }`)
	require.Contains(t, fmt.Sprint(secrets), "registry-token")
}

// backupStatuses reads the operations' statuses from a backup file.
func backupStatuses(t *testing.T, path string) map[string]capstan.OperationStatus {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]capstan.OperationStatus{}
	_, err = backup.Each(context.Background(), f, func(r capstan.BackupRecord) error {
		if r.Kind == capstan.BackupOperation {
			var op capstan.Operation
			if err := json.Unmarshal(r.Data, &op); err != nil {
				return err
			}
			out[capstan.OperationGID(op.ID)] = op.Status
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

func startBackupOp(t *testing.T, p *proc, name string) string {
	in := p.gqlAs(t, backupAdmin, fmt.Sprintf(`mutation { createIntent(input: {action: "install", targetResourceType: "backup.thing", desiredResult: {name: %q}, constraints: {environment: "staging"}}) { id } }`, name))
	id := in["createIntent"].(map[string]any)["id"]
	plan := p.gqlAs(t, backupAdmin, fmt.Sprintf(`mutation { planIntent(input: {intent: %q}) { id status problems } }`, id))["planIntent"].(map[string]any)
	require.Equal(t, "READY", plan["status"], "%v", plan["problems"])
	op := p.gqlAs(t, backupAdmin, fmt.Sprintf(`mutation { startOperation(input: {plan: %q}) { id } }`, plan["id"]))
	return op["startOperation"].(map[string]any)["id"].(string)
}

// finishAll approves every waiting gate until each operation succeeds.
func finishAll(t *testing.T, p *proc, ops []string) {
	waitFor(t, 90*time.Second, func() bool {
		done := 0
		for _, op := range ops {
			switch operationStatus(t, p, op) {
			case "SUCCEEDED":
				done++
			case "WAITING":
				_, _ = postQuiet(p, backupSRE, `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve", approve: true}) { status } }`, map[string]any{"op": op})
			case "FAILED", "CANCELLED", "ROLLED_BACK":
				t.Fatalf("%s ended %s after the restore:\n%s", op, operationStatus(t, p, op), p.output())
			}
		}
		return done == len(ops)
	}, "every restored operation finishes")
}

func operationStatus(t *testing.T, p *proc, op string) string {
	got := p.gqlAs(t, backupAdmin, fmt.Sprintf(`{ operation(id: %q) { status } }`, op))
	return got["operation"].(map[string]any)["status"].(string)
}

func countStatus(t *testing.T, p *proc, ops []string, status string) int {
	n := 0
	for _, op := range ops {
		if operationStatus(t, p, op) == status {
			n++
		}
	}
	return n
}

func (p *proc) gqlAs(t *testing.T, bearer, query string) map[string]any {
	t.Helper()
	data, errs := p.tryAs(t, bearer, query, nil)
	require.Empty(t, errs, "%s", query)
	return data
}

func waitFor(t *testing.T, within time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "timed out: %s", what)
		time.Sleep(100 * time.Millisecond)
	}
}

// capstanTry runs the capstan binary and returns its combined output and
// exit code.
func capstanTry(env []string, args ...string) (string, int) {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		return string(out) + err.Error(), -1
	}
	return string(out), 0
}

func capstanCmd(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, code := capstanTry(env, args...)
	require.Equal(t, 0, code, "capstan %s:\n%s", strings.Join(args, " "), out)
	return out
}
