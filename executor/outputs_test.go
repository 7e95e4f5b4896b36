package executor_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/artifact"
	"github.com/capstan-dev/capstan/service"
)

const litterPack = `id: litter
version: 1.0.0
scenarios:
  - id: thing.litter
    action: litter
    target_resource_type: thing
    plan:
      nodes:
        - id: litter
          type: job
          title: Write a report, and more besides
          job:
            run:
              runner: shell
              script: |
                echo "all good" > "$CAPSTAN_OUTPUTS/report"
                head -c 100000 /dev/zero > "$CAPSTAN_OUTPUTS/junk"
                mkdir -p "$CAPSTAN_OUTPUTS/stash/deeper" && echo hidden > "$CAPSTAN_OUTPUTS/stash/deeper/x"
                chmod 000 "$CAPSTAN_OUTPUTS/stash/deeper" "$CAPSTAN_OUTPUTS/stash"
                ln -s /etc/passwd "$CAPSTAN_OUTPUTS/link"
            outputs:
              artifacts: [{name: report, type: report, sensitivity: internal}]
              evidence: [{name: ok, type: command, script: 'true'}]
`

// startFromPack installs a pack, then plans and starts an intent of one
// of its scenarios (environment dev), as an admin.
func startFromPack(t *testing.T, svc *service.Service, pack, action, typ string) *capstan.Operation {
	t.Helper()
	admin := as("alice", capstan.RoleAdmin)
	_, err := svc.InstallPackYAML(admin, action+".yaml", []byte(pack))
	require.NoError(t, err)
	in, err := svc.CreateIntent(admin, service.IntentInput{Action: action, TargetResourceType: typ, Constraints: map[string]any{"environment": "dev"}})
	require.NoError(t, err)
	plan, err := svc.PlanIntent(admin, in.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanReady, plan.Status, plan.Problems)
	op, err := svc.StartOperation(admin, plan.ID, "")
	require.NoError(t, err)
	return op
}

// TestAnEndedOperationKeepsOnlyItsArtifacts: what a job wrote to its
// outputs besides its declared artifacts (files, a directory it locked
// itself out of, a symlink) goes when the operation ends; the artifact
// stays readable.
func TestAnEndedOperationKeepsOnlyItsArtifacts(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, _ := setup(t, store, org)
		op := startFromPack(t, svc, litterPack, "litter", "thing")
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationSucceeded, op.Status, "%v", timeline(t, store, op.ID))
		dir := filepath.Join(executorDirs[store], artifact.OperationPrefix(op.ID))
		kept := func() (files []string) {
			_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(dir, path)
					files = append(files, rel)
				}
				return nil
			})
			return files
		}
		recs, err := store.OperationRecords(context.Background(), org, op.ID)
		require.NoError(t, err)
		var report capstan.Artifact
		for _, a := range recs.Artifacts {
			if a.Name == "report" {
				report = a
			}
		}
		require.Eventually(t, func() bool { return len(kept()) == 1 }, 10*time.Second, 20*time.Millisecond, "%v", kept())
		require.Equal(t, "file:"+filepath.Join(artifact.OperationPrefix(op.ID), kept()[0]), report.StorageRef, "only the recorded artifact's file stays")
		data, err := artifact.Read(context.Background(), artifact.Dir{Root: executorDirs[store]}, report, 0)
		require.NoError(t, err)
		require.Equal(t, "all good\n", string(data))
	})
}

const tamperPack = `
id: tamper
version: 1.0.0
scenarios:
  - id: thing.tamper
    action: tamper
    target_resource_type: thing
    plan:
      nodes:
        - id: report
          type: job
          title: Write a report
          job:
            run: {runner: shell, script: 'echo "all good" > "$CAPSTAN_OUTPUTS/report"'}
            outputs:
              artifacts: [{name: report, type: report, sensitivity: internal}]
              evidence: [{name: ok, type: command, script: 'true'}]
        - id: rewrite
          type: job
          title: Read the report, then rewrite it
          after: [report]
          job:
            inputs: {artifacts: [report]}
            run: {runner: shell, script: 'grep -q "all good" "$CAPSTAN_ARTIFACT_REPORT" && echo "tampered" > "$CAPSTAN_ARTIFACT_REPORT"'}
            outputs:
              evidence: [{name: ok, type: command, script: 'true'}]
`

// TestAnArtifactKeepsWhatItsJobLeft: a job downstream reads an artifact
// from the operation's outputs and may change that file, but the
// artifact recorded is the copy kept when its job ended, in the
// executor's directory, apart from the job directory.
func TestAnArtifactKeepsWhatItsJobLeft(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, _ := setup(t, store, org)
		op := startFromPack(t, svc, tamperPack, "tamper", "thing")
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationSucceeded, op.Status, "%v", timeline(t, store, op.ID))
		staged, err := os.ReadFile(filepath.Join(jobDirs[store], "outputs", op.ID, "report"))
		require.NoError(t, err)
		require.Equal(t, "tampered\n", string(staged), "the job downstream read and rewrote it")
		recs, err := store.OperationRecords(context.Background(), org, op.ID)
		require.NoError(t, err)
		var report capstan.Artifact
		for _, a := range recs.Artifacts {
			if a.Name == "report" {
				report = a
			}
		}
		data, err := artifact.Read(context.Background(), artifact.Dir{Root: executorDirs[store]}, report, 0)
		require.NoError(t, err)
		require.Equal(t, "all good\n", string(data), "the artifact is what its job left")
	})
}
