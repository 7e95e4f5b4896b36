package main_test

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/secret"
	"github.com/capstan-dev/capstan/tracing"
)

// otlpReceiver is an OTLP/HTTP collector on 127.0.0.1 that keeps the
// spans it receives: name -> trace ids (hex).
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans map[string][]string
	ops   []string // the capstan.operation.id attributes received
}

func startReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{spans: map[string][]string{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 16<<20))
		var export collector.ExportTraceServiceRequest
		if req.URL.Path != "/v1/traces" || proto.Unmarshal(body, &export) != nil {
			http.Error(w, "not OTLP traces", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range export.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					r.spans[s.Name] = append(r.spans[s.Name], hex.EncodeToString(s.TraceId))
					for _, a := range s.Attributes {
						if a.Key == string(tracing.AttrOperation) {
							r.ops = append(r.ops, a.Value.GetStringValue())
						}
					}
				}
			}
		}
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collector.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *otlpReceiver) traces(name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.spans[name]...)
}

// TestTracesReachACollector runs a real server with --otlp-endpoint: its
// requests are spans, and the node attempts of an operation waiting at its
// gate arrive in the trace derived from the operation's id.
func TestTracesReachACollector(t *testing.T) {
	t.Parallel()
	recv := startReceiver(t)
	data := t.TempDir()
	p := start(t, data, "--otlp-endpoint", recv.URL)
	defer p.kill()
	// A client's traceparent is not trusted: its request's span starts a
	// trace of its own (--trust-traceparent would continue the client's).
	const hostileTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, err := http.NewRequest(http.MethodPost, p.url+"/graphql", strings.NewReader(`{"query":"{ viewer { organization } }"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("traceparent", "00-"+hostileTrace+"-00f067aa0ba902b7-01")
	_, err = sendGQL(req)
	require.NoError(t, err)
	intent := p.gql(t, `mutation { createIntent(input: {action: "create", targetResourceType: "kubernetes.cluster", mode: ADVANCED,
		desiredResult: {name: "traced-k8s"}, constraints: {environment: "prod"}, providers: [{requirement: "hosts", provider: "compute.node/prod-worker-1"}]}) { id } }`, nil)
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status } }`, map[string]any{"id": intent["createIntent"].(map[string]any)["id"]})
	op := p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["planIntent"].(map[string]any)["id"]})
	gid := op["startOperation"].(map[string]any)["id"].(string)
	_, opID, err := capstan.ParseGlobalID(gid, "Operation")
	require.NoError(t, err)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r := p.gql(t, `query($id: ID!) { operation(id: $id) { status } }`, map[string]any{"id": gid})
		o := r["operation"].(map[string]any)
		if o["status"] == "WAITING" {
			break
		}
		require.True(t, time.Now().Before(deadline), "the operation never reached its gate: %v", o)
		time.Sleep(300 * time.Millisecond)
	}
	key, err := secret.LoadKey("CAPSTAN_NO_SUCH_VARIABLE", filepath.Join(data, "secrets", "secret.key"))
	require.NoError(t, err)
	want := tracing.NewIDs(key).TraceID("demo", opID).String()
	require.NotEqual(t, tracing.NewIDs(nil).TraceID("demo", opID).String(), want, "keyed: an operation's id alone does not give its trace")
	require.Eventually(t, func() bool {
		for _, id := range recv.traces("node.attempt") {
			if id == want {
				return len(recv.traces("POST /graphql")) > 0 // the requests' spans (otelhttp)
			}
		}
		return false
	}, 30*time.Second, 200*time.Millisecond, "want %s (operation %s); spans received: %v", want, opID, recv.spans)
	require.NotContains(t, recv.traces("POST /graphql"), hostileTrace, "no span joined the client's trace")
	recv.mu.Lock()
	pasted := recv.ops[0]
	recv.mu.Unlock()
	r := p.gql(t, `query($id: ID!) { operation(id: $id) { id } }`, map[string]any{"id": pasted})
	require.Equal(t, gid, r["operation"].(map[string]any)["id"], "the operation id a trace shows is one the API accepts")
}
