package main_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/shard"
	"github.com/capstan-dev/capstan/internal/neo4jtest"
	"github.com/capstan-dev/capstan/internal/s3test"
)

// handoverPack makes an artifact in one job and reads it in another, a
// gate between them: the consumer keeps the SHA-256 of the bytes it read
// as an artifact of its own, and fails when its input is missing.
const handoverPack = `id: handover
version: 1.0.0
resource_types:
  - {key: handover.thing, display_name: Hand-over thing, allowed_actions: [install]}
scenarios:
  - id: handover.thing.install
    action: install
    target_resource_type: handover.thing
    plan:
      nodes:
        - id: make
          type: job
          title: Makes a report
          job:
            run: {runner: shell, script: 'head -c 200000 /dev/urandom | base64 > "$CAPSTAN_OUTPUTS/report"'}
            outputs:
              artifacts: [{name: report, type: report, sensitivity: internal}]
              evidence: [{name: made, type: command, script: 'test -s "$CAPSTAN_OUTPUTS/report"'}]
            controls: {idempotent: true}
        - id: approve
          type: gate
          title: Approve
          after: [make]
          gate: {type: approval, reason: Read it on, required_roles: [sre], approvals: 1}
        - id: use
          type: job
          title: Reads the report
          after: [approve]
          job:
            inputs: {artifacts: [report]}
            run: {runner: shell, script: 'set -e; test -f "$CAPSTAN_ARTIFACT_REPORT"; sha256sum < "$CAPSTAN_ARTIFACT_REPORT" | cut -d" " -f1 > "$CAPSTAN_OUTPUTS/seen"; touch read'}
            outputs:
              artifacts: [{name: seen, type: report, sensitivity: internal}]
              evidence: [{name: read, type: command, script: 'test -f read'}]
            controls: {idempotent: true}
`

// TestAnArtifactCrossesReplicas: an operation makes an artifact on
// replica a; while its gate waits, a stops and b takes the shard; b's
// job downstream reads the bytes a's job wrote, through a real S3 server
// (versitygw on loopback). On each replica's own disk — the store's
// default — the same hand-over leaves the consumer without its input:
// that run fails, which is what the object store is for (issue 44).
func TestAnArtifactCrossesReplicas(t *testing.T) {
	t.Parallel()
	db, err := neo4jtest.Start(context.Background())
	require.NoError(t, err, "Neo4j is part of the test suite")
	t.Cleanup(func() { db.Close() })
	s3 := s3test.Start(t)
	packs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(packs, "handover.yaml"), []byte(handoverPack), 0o600))

	t.Run("an object store", func(t *testing.T) {
		op, o := handOver(t, db, packs, "--artifact-store", "s3://handover", "--artifact-endpoint", s3.Endpoint)
		require.Equal(t, "SUCCEEDED", o["status"], "%v", o["nodeRuns"])
		refs := map[string]string{}
		for _, x := range o["artifacts"].([]any) {
			a := x.(map[string]any)
			refs[a["name"].(string)] = a["storageRef"].(string)
		}
		require.Equal(t, "s3://handover/operations/"+localID(op)+"/make/1/report", refs["report"])
		report, err := os.ReadFile(filepath.Join(s3.Root, "handover", "operations", localID(op), "make", "1", "report"))
		require.NoError(t, err, "the producer's bytes are in the bucket")
		seen, err := os.ReadFile(filepath.Join(s3.Root, "handover", "operations", localID(op), "use", "1", "seen"))
		require.NoError(t, err)
		sum := sha256.Sum256(report)
		require.Equal(t, hex.EncodeToString(sum[:]), strings.TrimSpace(string(seen)), "the consumer on b read the bytes the producer on a wrote")
	})
	t.Run("each replica's disk", func(t *testing.T) {
		_, o := handOver(t, db, packs)
		require.Equal(t, "FAILED", o["status"])
		require.Equal(t, "FAILED", runsOf(o)["use"]["status"], "the consumer on b has no input: %v", o["nodeRuns"])
	})
}

// handOver runs the pack's operation: started on replica a, which stops
// while the gate waits; approved on b, which took every shard. It
// returns the operation's id and its end.
func handOver(t *testing.T, db *neo4jtest.Server, packs string, extra ...string) (string, map[string]any) {
	dir := t.TempDir()
	org := fmt.Sprintf("handover-%d", time.Now().UnixNano())
	tokens := filepath.Join(dir, "tokens.yaml")
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf("tokens:\n  - {token: %q, actor: alice, organization: %s, roles: [admin]}\n  - {token: %q, actor: bob, organization: %s, roles: [sre]}\n",
		token, org, sweepSRE, org)), 0o600))
	args := append([]string{"--store", "neo4j", "--neo4j-uri", db.URI, "--executor-lease", stallLease.String(), "--tokens", tokens, "--packs", packs}, extra...)
	credentials := func(cmd *exec.Cmd) {
		cmd.Env = append(cmd.Env, "CAPSTAN_ARTIFACT_ACCESS_KEY="+s3test.AccessKey, "CAPSTAN_ARTIFACT_SECRET_KEY="+s3test.SecretKey)
	}
	a := launchWith(t, credentials, filepath.Join(dir, "a"), args...)
	a.waitReady(t, 90*time.Second)
	if len(extra) == 0 {
		require.Contains(t, a.output(), "artifacts are kept on this replica's disk", "a replica on Neo4j without a shared store says so")
	}
	in := a.gql(t, `mutation { createIntent(input: {action: "install", targetResourceType: "handover.thing", mode: ADVANCED, desiredResult: {name: "handed-over"}}) { id } }`, nil)["createIntent"].(map[string]any)["id"]
	plan := a.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": in})["planIntent"].(map[string]any)
	require.Equal(t, "READY", plan["status"], "%v", plan["problems"])
	op := a.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
	read := func(p *proc) map[string]any {
		return p.gql(t, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status error } artifacts { name storageRef } } }`, map[string]any{"id": op})["operation"].(map[string]any)
	}
	require.Eventually(t, func() bool { return runsOf(read(a))["approve"]["status"] == "WAITING_APPROVAL" }, 60*time.Second, 20*time.Millisecond,
		"the report is made and the gate waits")

	b := launchWith(t, credentials, filepath.Join(dir, "b"), args...)
	b.waitReady(t, 90*time.Second)
	a.stop(t) // hands its shards over
	require.Eventually(t, func() bool { return len(shards(t, b)) == shard.Shards }, 60*time.Second, 50*time.Millisecond, "b takes every shard")
	_, errs := b.tryAs(t, sweepSRE, `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve", approve: true}) { status } }`, map[string]any{"op": op})
	require.Empty(t, errs)
	var end map[string]any
	require.Eventually(t, func() bool {
		end = read(b)
		s := end["status"]
		return s == "SUCCEEDED" || s == "FAILED"
	}, 60*time.Second, 20*time.Millisecond, "the operation ends on b")
	b.stop(t)
	return op, end
}

// localID is the id a global id names.
func localID(gid string) string {
	_, id, _ := capstan.ParseGlobalID(gid, "")
	return id
}
