package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// siblingsPack fails one job while its sibling is still running.
const siblingsPack = `id: siblings
version: 1.0.0
scenarios:
  - id: thing.siblings
    action: install
    target_resource_type: thing
    plan:
      nodes:
        - id: fails
          type: job
          title: Fails at once
          job:
            run: {runner: shell, script: 'sleep 0.5; exit 3'}
            outputs: {evidence: [{name: never, type: command, script: 'false'}]}
            controls: {retry: {maximum_attempts: 1}}
        - id: lingers
          type: job
          title: Still running
          job:
            run: {runner: shell, script: 'exec sleep 301.25'}
            outputs: {evidence: [{name: never, type: command, script: 'true'}]}
        - id: after-both
          type: job
          title: Never starts
          after: [fails, lingers]
          job:
            run: {runner: shell, script: 'true'}
            outputs: {evidence: [{name: ok, type: command, script: 'true'}]}
`

// TestFailedOperationLeavesNoNodeRunning: when one job fails past its
// retries while a sibling job runs, the operation fails and, in the same
// commit, every unfinished node ends cancelled; the sibling's processes
// are killed — on both stores.
func TestFailedOperationLeavesNoNodeRunning(t *testing.T) {
	t.Parallel()
	packs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(packs, "siblings.yaml"), []byte(siblingsPack), 0o600))
	for store, args := range bothStores(t, "--packs", packs) {
		t.Run(store, func(t *testing.T) {
			p := start(t, t.TempDir(), args...)
			op, err := runQuiet(p, "thing", "siblings-"+store)
			require.NoError(t, err)
			waitForEnd(t, p, op)
			got := p.gql(t, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status } } }`, map[string]any{"id": op})["operation"].(map[string]any)
			require.Equal(t, "FAILED", got["status"])
			runs := map[string]string{}
			for _, r := range got["nodeRuns"].([]any) {
				r := r.(map[string]any)
				runs[r["node"].(string)] = r["status"].(string)
			}
			require.Equal(t, "FAILED", runs["fails"])
			require.Equal(t, "CANCELLED", runs["lingers"], "a sibling still running when the operation failed")
			require.NotContains(t, []string{"RUNNING", "READY", "PENDING"}, runs["after-both"])
			require.Eventually(t, func() bool {
				return exec.Command("pgrep", "-f", "sleep 301.25").Run() != nil
			}, 10*time.Second, 100*time.Millisecond, "the cancelled sibling's process still runs")
		})
	}
}
