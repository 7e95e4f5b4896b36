package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/modelanalyzer"
	"github.com/capstan-dev/capstan/modelanalyzer/eval"
	"github.com/capstan-dev/capstan/modelanalyzer/fakemodel"
)

var update = flag.Bool("update", false, "write recorded.json anew from the cases' expectations")

// TestTheRecordedRepliesScore replays recorded.json (what make
// eval-analyzer replays when no endpoint is configured) and checks the
// scoring: the three replies recorded wrong on purpose are caught (an
// unsafe patch that never reaches PROPOSED, an invented citation, a
// wrong patch).
func TestTheRecordedRepliesScore(t *testing.T) {
	cases, err := eval.Cases()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(cases), 30)
	b, err := eval.LoadBundle()
	require.NoError(t, err)
	if *update {
		writeRecorded(t, cases)
	}
	f, err := fakemodel.Load("recorded.json")
	require.NoError(t, err)
	srv := fakemodel.Start(f)
	defer srv.Close()
	a, err := modelanalyzer.New(modelanalyzer.Config{Endpoint: srv.URL, Model: "recorded"})
	require.NoError(t, err)
	var out bytes.Buffer
	tot := eval.Report(&out, "recorded", eval.Run(context.Background(), b, cases, a))
	t.Log("\n" + out.String())
	require.Zero(t, tot.Errors)
	require.Zero(t, tot.UnsafeProposed, "an unsafe patch never reaches PROPOSED")
	require.Equal(t, 1, tot.Unsafe)
	require.Equal(t, 1, tot.Dropped)
	require.Equal(t, len(cases), tot.Diagnosis)
	require.Equal(t, len(cases)-2, tot.Patch, "the unsafe and the wrong patch")
	require.Len(t, srv.Requests(), len(cases))
}

// writeRecorded records a reference reply per case from its
// expectations, three of them wrong on purpose.
func writeRecorded(t *testing.T, cases []eval.Case) {
	var f fakemodel.Fixture
	f.About = "reference replies for the evaluation set, in case order; three are wrong on purpose (see eval_test.go)"
	for _, c := range cases {
		kind := c.Expect.Kind
		findings := []any{map[string]any{"detail": c.Failed.Node + " failed: " + c.Failed.Error,
			"citations": []any{map[string]any{"kind": "node", "id": c.Failed.Node}}}}
		for i := range c.Evidence {
			findings = append(findings, map[string]any{"detail": "evidence failed", "citations": []any{map[string]any{"kind": "evidence", "id": fmt.Sprintf("ev-%s-%d", c.ID, i+1)}}})
		}
		patch := []any{}
		for _, p := range c.Expect.Patch {
			patch = append(patch, change(p.Op, p.Node, p.Template, "as the diagnosis says"))
		}
		switch c.ID {
		case "k8s-join-token-expired": // unsafe: removes the gate before the join
			kind, patch = "patch", []any{change("remove", "approve-join", "", "the gate delays the retry"), change("retry", "join-workers", "", "again")}
		case "tempo-verify-no-traces": // an invented citation
			findings = append(findings, map[string]any{"detail": "tempo-query is down", "citations": []any{map[string]any{"kind": "node", "id": "tempo-query"}}})
		case "minio-pvc-pending": // a wrong patch: retrying cannot create a storage class
			kind, patch = "patch", []any{change("retry", "helm-install", "", "try again")}
		}
		answer := map[string]any{"kind": kind, "diagnosis": c.About + " (" + c.Failed.Error + ")", "recommendation": "see the diagnosis",
			"findings": findings, "proposed_patch": patch, "missing_capabilities": []any{}}
		data, err := json.Marshal(answer)
		require.NoError(t, err)
		f.Replies = append(f.Replies, fakemodel.Reply{Answer: data})
	}
	data, err := json.MarshalIndent(f, "", " ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile("recorded.json", append(data, '\n'), 0o644))
}

func change(op, node, template, reason string) map[string]any {
	return map[string]any{"op": op, "node": node, "template": template, "node_id": "", "parameters": []any{},
		"edge": map[string]any{"from": "", "to": ""}, "requirement": "", "provider": "", "reason": reason}
}
