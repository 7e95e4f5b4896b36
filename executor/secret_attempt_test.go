package executor_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/secret"
)

// attemptsPack mints a token on each attempt; its evidence holds from the
// second attempt on, so the first attempt's value is kept and then
// superseded.
const attemptsPack = `
id: attempts
version: 1.0.0
scenarios:
  - id: thing.mint
    action: mint
    target_resource_type: thing
    plan:
      nodes:
        - id: mint
          type: job
          title: Mint a token, proven on the second attempt
          job:
            run: {runner: shell, script: 'echo x >> attempts; printf "s3cr3t-attempt-%s-of-%s" "$(wc -l < attempts)" "$CAPSTAN_OPERATION" > "$CAPSTAN_OUTPUTS/api-token"'}
            outputs:
              artifacts: [{name: api-token, type: token, sensitivity: secret}]
              evidence: [{name: second-attempt, type: command, script: 'test "$(wc -l < attempts)" -ge 2'}]
            controls:
              retry: {initial_interval: 10ms, maximum_attempts: 2, on_exhausted: fail}
`

// TestEachAttemptKeepsItsSecretUnderItsOwnName: a job's secret artifact
// is stored per attempt, so a late value (an earlier attempt finishing on
// a deposed owner) can never replace the one the operation recorded
// (issue 44): the artifact names the second attempt's value, and the
// first attempt's is apart.
func TestEachAttemptKeepsItsSecretUnderItsOwnName(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		key := bytes.Repeat([]byte{7}, secret.KeySize)
		file, err := secret.OpenFile(filepath.Join(t.TempDir(), "secrets.json"), key)
		require.NoError(t, err)
		vault := secret.NewVault(file)
		svc, _ := setup(t, store, org, func(c *executor.Config) { c.Secrets = vault })
		op := startFromPack(t, svc, attemptsPack, "mint", "thing")
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationSucceeded, op.Status, "%v", timeline(t, store, op.ID))

		recs, err := store.OperationRecords(context.Background(), org, op.ID)
		require.NoError(t, err)
		var refs []string
		for _, a := range recs.Artifacts {
			if a.Name == "api-token" {
				refs = append(refs, a.StorageRef)
			}
		}
		require.NotEmpty(t, refs)
		name, ok := secret.ParseRef(refs[len(refs)-1])
		require.True(t, ok, "%v", refs)
		require.True(t, strings.HasSuffix(name, "/mint/2/api-token"), "the second attempt's own name: %s", name)
		got, err := vault.Get(context.Background(), org, name)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("s3cr3t-attempt-2-of-%s", capstan.OperationGID(op.ID)), string(got))
		first, err := vault.Get(context.Background(), org, strings.TrimSuffix(name, "/2/api-token")+"/1/api-token")
		require.NoError(t, err, "the first attempt's value is kept apart")
		require.Equal(t, fmt.Sprintf("s3cr3t-attempt-1-of-%s", capstan.OperationGID(op.ID)), string(first))
	})
}
