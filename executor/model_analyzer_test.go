package executor_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/modelanalyzer"
	"github.com/capstan-dev/capstan/modelanalyzer/fakemodel"
)

// TestAModelsInvalidAnswersEndInAttention: an ai_analysis node answered by
// a model whose answers are not the schema retries as the analysis policy
// says (three attempts), then the operation asks for attention with the
// reason, and nothing after the node runs.
func TestAModelsInvalidAnswersEndInAttention(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		f, err := fakemodel.Load(filepath.Join("..", "modelanalyzer", "testdata", "fixtures", "invalid-json.json"))
		require.NoError(t, err)
		f.Replies[0].Repeat = true
		srv := fakemodel.Start(f)
		defer srv.Close()
		model, err := modelanalyzer.New(modelanalyzer.Config{Endpoint: srv.URL, Model: "fake-1"})
		require.NoError(t, err)
		svc, _ := setup(t, store, org, func(c *executor.Config) { c.Analyzer = model; c.SkipRules = true })
		op := startAnalysis(t, svc)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status == capstan.OperationWaiting })
		runs := nodeRuns(t, store, op.ID)
		require.Equal(t, capstan.NodeFailed, runs["diagnose"].Status)
		require.Equal(t, 3, runs["diagnose"].Attempts)
		require.Contains(t, runs["diagnose"].Error, "model answer rejected")
		require.NotContains(t, runs, "after-diagnosis")
		require.Len(t, srv.Requests(), 3)
		require.Contains(t, timeline(t, store, op.ID), "operation.needs_attention")
	})
}
