package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/artifact"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/internal/s3test"
)

// s3Store opens a bucket of a real S3 server started for the test, and
// returns it with the directory its objects are files of.
func s3Store(t *testing.T) (artifact.Store, string) {
	srv := s3test.Start(t)
	s3, err := artifact.OpenS3(context.Background(), artifact.S3Config{Endpoint: srv.Endpoint, Bucket: "artifacts",
		AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey})
	require.NoError(t, err)
	return s3, filepath.Join(srv.Root, "artifacts")
}

// TestTheAnalyzerReadsThroughTheArtifactStore: with artifacts in an
// object store, a job's declared artifact and its diagnostics are
// objects there, nothing of them is on the executor's disk, and the
// analyzer reads the log line it cites through the store.
func TestTheAnalyzerReadsThroughTheArtifactStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		s3, bucket := s3Store(t)
		svc, _ := setup(t, store, org, func(c *executor.Config) { c.Artifacts = s3 })
		op := startAnalysis(t, svc)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationSucceeded, op.Status, "%v", timeline(t, store, op.ID))
		a := analysisOf(t, store, op.ID, capstan.EvidencePassed)
		require.Contains(t, a.Diagnosis, "ERROR ingester-1: disk full", "read through the store")
		recs, err := store.OperationRecords(context.Background(), org, op.ID)
		require.NoError(t, err)
		for _, art := range recs.Artifacts {
			require.True(t, strings.HasPrefix(art.StorageRef, "s3://artifacts/"+artifact.OperationPrefix(op.ID)+"/"+art.ProducedBy+"/1/"), art.StorageRef)
			require.NotEmpty(t, art.SHA256, art.Name)
			_, err := os.Stat(filepath.Join(bucket, strings.TrimPrefix(art.StorageRef, "s3://artifacts/")))
			require.NoError(t, err, "%s is an object of the bucket", art.Name)
		}
		_, err = os.Stat(filepath.Join(executorDirs[store], "artifacts", op.ID))
		require.True(t, os.IsNotExist(err), "no diagnostics log on the replica's disk")
	})
}

// bigPack's job leaves an artifact one byte past the bound (a sparse
// file: no disk spent).
const bigPack = `id: big
version: 1.0.0
resource_types:
  - {key: big.thing, display_name: Big thing, allowed_actions: [make]}
scenarios:
  - id: big.make
    action: make
    target_resource_type: big.thing
    plan:
      nodes:
        - id: big
          type: job
          title: Leaves too much
          job:
            run: {runner: shell, script: 'truncate -s 67108865 "$CAPSTAN_OUTPUTS/report"'}
            outputs:
              artifacts: [{name: report, type: report, sensitivity: internal}]
              evidence: [{name: ok, type: command, script: 'true'}]
`

// TestAnArtifactPastTheBoundIsFailedEvidence: a job that leaves an
// artifact larger than artifact.MaxSize keeps none of it: its node fails
// on the artifact's failed evidence, which says why.
func TestAnArtifactPastTheBoundIsFailedEvidence(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, _ := setup(t, store, org)
		op := startFromPack(t, svc, bigPack, "make", "big.thing")
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationFailed, op.Status)
		recs, err := store.OperationRecords(context.Background(), org, op.ID)
		require.NoError(t, err)
		var note string
		for _, e := range recs.Evidence {
			if e.Item == "artifact report" {
				note, _ = e.Source["note"].(string)
				require.Equal(t, capstan.EvidenceFailed, e.Result)
			}
		}
		require.Contains(t, note, "67108865 bytes, more than the 67108864 an artifact may hold")
		for _, a := range recs.Artifacts {
			require.NotEqual(t, "report", a.Name, "nothing of it is kept")
		}
	})
}
