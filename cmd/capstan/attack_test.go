package main_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/gqlws"
	"github.com/capstan-dev/capstan/internal/metrics"
	"github.com/capstan-dev/capstan/server"
)

// The attack suite: one test per class of hostile request, each against
// a real `capstan serve` over HTTP or WebSocket, each asserting the
// typed error and that the server still answers afterwards.

const (
	attackAdmin  = "attack-admin-token-0123456789"
	attackViewer = "attack-viewer-token-0123456789"
	attackOther  = "attack-other-org-token-0123456789"
)

// startGuarded starts `capstan serve` with a tokens file (not dev mode:
// introspection and suggestions off) and extra flags.
func startGuarded(t *testing.T, extra ...string) *proc {
	t.Helper()
	dir := t.TempDir()
	tokens := tokensFile(t, dir, "alice acme admin "+attackAdmin, "victor acme viewer "+attackViewer, "olga other admin "+attackOther)
	defaults := []string{"--rate-limit", fmt.Sprint(server.DefaultRateLimit.Requests), "--cost-rate-limit", fmt.Sprint(server.DefaultRateLimit.Cost),
		"--subscription-limit", fmt.Sprint(server.DefaultRateLimit.Subscriptions)}
	return start(t, dir, append(append([]string{"--tokens", tokens}, defaults...), extra...)...)
}

func (r gqlReply) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	ext, _ := r.Errors[0]["extensions"].(map[string]any)
	if reason, ok := ext["reason"].(string); ok {
		return ext["code"].(string) + "/" + reason
	}
	code, _ := ext["code"].(string)
	return code
}

// healthy checks the server still serves a typical query.
func healthy(t *testing.T, p *proc) {
	t.Helper()
	r := postAs(t, p, attackAdmin, `{ viewer { actor organization } resources(first: 5) { totalCount } }`, nil)
	require.Empty(t, r.Errors)
	require.Equal(t, "alice", r.Data["viewer"].(map[string]any)["actor"])
}

func aliased(n int, field string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "a%d: %s ", i, field)
	}
	return b.String()
}

func TestAttackExpensiveRequests(t *testing.T) {
	t.Parallel()
	p := startGuarded(t, "--rate-limit", "0", "--cost-rate-limit", "0")
	multiplying := `{ resource(key: "kubernetes.cluster/prod-k8s") { ...F0 } } `
	for i := range 6 {
		multiplying += fmt.Sprintf("fragment F%d on Resource { %s } ", i, strings.Repeat(fmt.Sprintf("relationships { target { ...F%d } } ", i+1), 5))
	}
	multiplying += "fragment F6 on Resource { key }"
	attacks := []struct {
		name, query, code string
	}{
		{"tens of thousands of duplicated fields", "{ viewer { " + strings.Repeat("actor ", 40000) + "} }", "INVALID/QUERY_TOO_LARGE"},
		{"tens of thousands of short fields", "{viewer{" + strings.Repeat("a ", 30000) + "}}", "INVALID/TOKEN_LIMIT"},
		{"duplicated fields under the token limit", "{ viewer { " + strings.Repeat("actor ", 5000) + "} }", "INVALID/FIELD_REPEAT_LIMIT"},
		{"a thousand aliases of a full page", "{ " + aliased(1000, "resources(first: 500) { edges { node { key } } }") + "}", "INVALID/TOKEN_LIMIT"},
		{"a hundred aliases of a full page", "{ " + aliased(100, "resources(first: 500) { edges { node { key } } }") + "}", "INVALID/ROOT_FIELD_LIMIT"},
		{"aliases of full pages under the alias limit", "{ " + aliased(20, "resources(first: 500) { edges { node { key name relationships { type target { key } } } } }") + "}", "INVALID/COST_LIMIT"},
		{"nesting", `{ resource(key: "x") { ` + strings.Repeat("relationships { target { ", 10) + "key" + strings.Repeat(" } }", 10) + " } }", "INVALID/DEPTH_LIMIT"},
		{"fragments that multiply", multiplying, "INVALID/FIELD_LIMIT"},
		{"a huge document", "{ viewer { actor } }" + strings.Repeat(" ", 70<<10), "INVALID/QUERY_TOO_LARGE"},
		{"a page too large", `{ resources(first: 100000) { totalCount } }`, "INVALID"},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			r := postAs(t, p, attackAdmin, a.query, nil)
			require.Equal(t, a.code, r.code(), "%v", r.Errors)
			require.Nil(t, r.Data["resources"])
			healthy(t, p)
		})
	}
}

func TestAttackSchemaDiscovery(t *testing.T) {
	t.Parallel()
	p := startGuarded(t)
	r := postAs(t, p, attackViewer, `{ __schema { types { name } } }`, nil)
	require.Equal(t, "INVALID/INTROSPECTION_DISABLED", r.code(), "introspection is off without dev mode: %v", r.Errors)
	require.Nil(t, r.Data)
	r = postAs(t, p, attackViewer, `{ resourc { id } }`, nil)
	require.NotEmpty(t, r.Errors)
	require.NotContains(t, fmt.Sprint(r.Errors), "Did you mean", "no suggestions without dev mode")
	healthy(t, p)
}

func TestAttackMutationOverGET(t *testing.T) {
	t.Parallel()
	p := startGuarded(t)
	q := url.Values{"query": {`mutation { createIntent(input: {action: "install", targetResourceType: "tempo.instance", desiredResult: {name: "x"}}) { id } }`}}
	req, _ := http.NewRequest(http.MethodGet, p.url+"/graphql?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+attackAdmin)
	r := doGQL(t, req)
	require.Equal(t, http.StatusMethodNotAllowed, r.status)
	require.Equal(t, "POST", r.header.Get("Allow"))
	require.Equal(t, "INVALID", r.code())
	got := postAs(t, p, attackAdmin, `{ intents { totalCount } }`, nil)
	require.Equal(t, float64(0), got.Data["intents"].(map[string]any)["totalCount"], "nothing was created")

	q = url.Values{"query": {`{ viewer { actor } }`}}
	req, _ = http.NewRequest(http.MethodGet, p.url+"/graphql?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+attackAdmin)
	require.Empty(t, doGQL(t, req).Errors, "a query over GET is fine")
}

func TestAttackRateLimit(t *testing.T) {
	// The defaults: a burst of 100, then 50 a second.
	p := startGuarded(t)
	var refusedAtDefaults atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if postAs(t, p, attackViewer, `{ viewer { actor } }`, nil).status == http.StatusTooManyRequests {
					refusedAtDefaults.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	require.Greater(t, refusedAtDefaults.Load(), int32(0), "400 requests at once pass the default burst and rate")

	p = startGuarded(t, "--rate-limit", "5")
	limited := 0
	var last gqlReply
	for range 40 {
		r := postAs(t, p, attackViewer, `{ viewer { actor } }`, nil)
		if r.status == http.StatusTooManyRequests {
			limited++
			last = r
		}
	}
	require.Greater(t, limited, 20, "a burst of 10 at most, then 5 per second")
	require.Equal(t, "RATE_LIMITED", last.code())
	require.NotEmpty(t, last.header.Get("Retry-After"))
	healthy(t, p) // another token keeps its own budget

	// Cost: two heavy queries in a row spend the token's budget.
	p = startGuarded(t, "--cost-rate-limit", "1000")
	heavy := `{ resources(first: 500) { edges { node { key name relationships { type } } } } }` // costs 27,002
	codes := []string{}
	for range 8 {
		codes = append(codes, postAs(t, p, attackViewer, heavy, nil).code())
	}
	require.Contains(t, codes, "RATE_LIMITED", "%v", codes)
	healthy(t, p)

	// WebSocket: subscribe messages count as requests.
	p = startGuarded(t, "--rate-limit", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := gqlws.Dial(ctx, p.url+"/graphql", attackViewer)
	require.NoError(t, err)
	defer c.Close()
	for i := range 12 {
		require.NoError(t, c.Subscribe(fmt.Sprint(i), `{ viewer { actor } }`, nil))
	}
	refused := 0
	for completes := 0; completes < 12; {
		m, err := c.Next()
		require.NoError(t, err)
		if m.Type == "complete" {
			completes++
		}
		if m.Type == "next" && strings.Contains(string(m.Payload), "RATE_LIMITED") {
			refused++
		}
	}
	require.Greater(t, refused, 4)
	healthy(t, p)
}

func TestAttackWebSocketBounds(t *testing.T) {
	t.Parallel()
	p := startGuarded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := gqlws.Dial(ctx, p.url+"/graphql", attackViewer)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Subscribe("deep", `subscription { operations { `+strings.Repeat("resource { relationships { target { ", 6)+"key"+strings.Repeat(" } } }", 6)+" } }", nil))
	m, err := c.Next()
	require.NoError(t, err)
	require.Contains(t, string(m.Payload), "DEPTH_LIMIT", "%s: %s", m.Type, m.Payload)
	require.NoError(t, c.Subscribe("ok", `{ viewer { actor } }`, nil))
	for {
		m, err = c.Next()
		require.NoError(t, err, "the connection survives a refused operation")
		if m.ID == "ok" && m.Type == "next" {
			require.Contains(t, string(m.Payload), "victor")
			break
		}
	}
}

// TestAttackIdleConnections holds 200 unauthenticated keep-alive
// connections and half-sent requests: the server closes them.
func TestAttackIdleConnections(t *testing.T) {
	t.Parallel()
	p := startGuarded(t, "--idle-timeout", "1s", "--read-header-timeout", "1s")
	addr := strings.TrimPrefix(p.url, "http://")
	var wg sync.WaitGroup
	closed := make(chan bool, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				closed <- false
				return
			}
			defer conn.Close()
			if i%2 == 0 { // keep-alive after one request
				fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			} else { // headers never finished
				fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
			}
			_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
			_, err = io.Copy(io.Discard, conn) // until the server closes
			closed <- err == nil
		}()
	}
	wg.Wait()
	close(closed)
	n := 0
	for ok := range closed {
		if ok {
			n++
		}
	}
	require.Equal(t, 200, n, "every idle or slow connection is closed by the server")
	healthy(t, p)

	// Headers past MaxHeaderBytes are refused.
	req, _ := http.NewRequest(http.MethodGet, p.url+"/healthz", nil)
	req.Header.Set("X-Big", strings.Repeat("a", 100<<10))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
}

func TestAttackConfiguration(t *testing.T) {
	t.Parallel()
	t.Run("dev mode refuses a non-loopback address", func(t *testing.T) {
		out, err := exec.Command(binary, "serve", "--listen", "0.0.0.0:0", "--data-dir", t.TempDir()).CombinedOutput()
		require.Error(t, err)
		require.Contains(t, string(out), "dev mode (no --tokens file) listens on loopback addresses only")
	})
	t.Run("unknown roles are a load error", func(t *testing.T) {
		dir := t.TempDir()
		tokens := filepath.Join(dir, "tokens.yaml")
		require.NoError(t, os.WriteFile(tokens, []byte(`tokens:
  - {token: "typo-role-token-0123456789", actor: a, organization: acme, roles: [admn]}
`), 0o600))
		out, err := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--data-dir", dir, "--tokens", tokens).CombinedOutput()
		require.Error(t, err)
		require.Contains(t, string(out), `unknown role \"admn\"`)
	})
	t.Run("no token passes for an analyzer or the executor", func(t *testing.T) {
		for _, actor := range []string{"ai-agent:rules", "AI-Agent:rules", " ai-agent:rules", "executor", "Capstan", "ali\u0007ce"} {
			dir := t.TempDir()
			tokens := filepath.Join(dir, "tokens.yaml")
			require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf(`tokens:
  - {token: "impostor-token-0123456789", actor: %q, organization: acme, roles: [sre]}
`, actor)), 0o600))
			out, err := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--data-dir", dir, "--tokens", tokens).CombinedOutput()
			require.Error(t, err, actor)
			require.Contains(t, string(out), "entry 1: actor", actor)
			require.Regexp(t, "reserved|is not a login", string(out), actor)
		}
	})
	t.Run("console and GraphiQL off and metrics on a listener of their own", func(t *testing.T) {
		p := startGuarded(t, "--graphiql=false", "--console=false", "--metrics-listen", "127.0.0.1:0")
		for _, path := range []string{"/", "/graphiql", "/metrics"} {
			resp, err := http.Get(p.url + path)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		}
		m := regexp.MustCompile(`"metrics":"(http://[^"]+)"`).FindStringSubmatch(p.output())
		require.NotNil(t, m, p.output())
		resp, err := http.Get(m[1])
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Contains(t, string(body), "capstan_")
	})
}

// forgeryPack's probes aim at the control plane's own
// loopback port and at the cloud metadata address.
const forgeryPack = `id: forgery
version: 1.0.0
scenarios:
  - id: thing.forge
    action: install
    target_resource_type: thing
    plan:
      nodes:
        - id: read-metrics
          type: verification
          title: Read the control plane's metrics
          probes:
            - {name: own-metrics, type: http, url: "http://localhost:8080/metrics", output_pattern: "never"}
            - {name: loopback, type: http, url: "http://127.0.0.1:8080/metrics"}
            - {name: metadata, type: http, url: "http://169.254.169.254/latest/meta-data/iam/"}
`

func TestAttackRequestForgery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "forgery.yaml"), []byte(forgeryPack), 0o644))
	p := startGuarded(t, "--packs", dir, "--egress-allow", "localhost,*.example.com")
	in := postAs(t, p, attackAdmin, `mutation { createIntent(input: {action: "install", targetResourceType: "thing", desiredResult: {name: "f1"}, constraints: {environment: "dev"}}) { id } }`, nil)
	plan := postAs(t, p, attackAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status } }`, map[string]any{"id": in.Data["createIntent"].(map[string]any)["id"]})
	require.Equal(t, "READY", plan.Data["planIntent"].(map[string]any)["status"], "%v", plan.Errors)
	op := postAs(t, p, attackAdmin, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan.Data["planIntent"].(map[string]any)["id"]}).Data["startOperation"].(map[string]any)["id"]
	var got gqlReply
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = postAs(t, p, attackViewer, `query($op: ID!) { operation(id: $op) { status nodeRuns { node status error } evidence { item result source } } }`, map[string]any{"op": op})
		if s := got.Data["operation"].(map[string]any)["status"]; s == "FAILED" || s == "SUCCEEDED" {
			break
		}
	}
	text := fmt.Sprint(got.Data)
	require.Equal(t, "FAILED", got.Data["operation"].(map[string]any)["status"], text)
	require.Contains(t, text, "169.254.169.254", "the refused call is named")
	require.Contains(t, text, "not in the allow-list")
	require.Contains(t, text, "loopback, link-local, metadata or private address", "a listed name that resolves to loopback is refused")
	require.NotContains(t, text, "go_goroutines", "no byte of the control plane's metrics reached evidence")
	require.NotContains(t, text, "capstan_")
	healthy(t, p)
}

func TestAttackHugeVariables(t *testing.T) {
	t.Parallel()
	p := startGuarded(t)
	zeros := strings.Repeat("0,", 2_000_000)
	body := `{"query":"{ viewer { actor } }","variables":{"x":[` + zeros + `0]}}`
	req, _ := http.NewRequest(http.MethodPost, p.url+"/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+attackViewer)
	r := doGQL(t, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
	require.Equal(t, "INVALID", r.code())
	healthy(t, p)
}

// TestAttackSubscriptionHoarding: one token holds at most its limit of
// subscriptions open over all its connections; a completed one frees
// its place.
func TestAttackSubscriptionHoarding(t *testing.T) {
	p := startGuarded(t, "--subscription-limit", "3")
	// The connections live as long as ctx: a bound for a test that hangs,
	// not a budget (20 s ran out on a loaded machine, closing them all).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	first, err := gqlws.Dial(ctx, p.url+"/graphql", attackViewer)
	require.NoError(t, err)
	defer first.Close()
	second, err := gqlws.Dial(ctx, p.url+"/graphql", attackViewer)
	require.NoError(t, err)
	defer second.Close()
	const sub = `subscription { operations { id status } }`
	require.NoError(t, first.Subscribe("a", sub, nil))
	require.NoError(t, first.Subscribe("b", sub, nil))
	require.NoError(t, second.Subscribe("c", sub, nil))
	liveSubscriptions(t, p, 3) // all three are open
	require.NoError(t, second.Subscribe("d", sub, nil))
	refused := nextFor(t, second, "d")
	require.Contains(t, string(refused.Payload), "RATE_LIMITED", "%s: %s", refused.Type, refused.Payload)

	other, err := gqlws.Dial(ctx, p.url+"/graphql", attackAdmin)
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, other.Subscribe("x", sub, nil))
	require.NoError(t, other.Subscribe("y", `{ viewer { actor } }`, nil))
	require.NotContains(t, string(nextFor(t, other, "x", "y").Payload), "RATE_LIMITED", "another token has its own limit")

	// A completed subscription frees its place: e is accepted (silent),
	// f, the fourth again, is refused.
	require.NoError(t, first.Complete("a"))
	liveSubscriptions(t, p, 3) // b, c and the other token's x
	require.NoError(t, second.Subscribe("e", sub, nil))
	liveSubscriptions(t, p, 4)
	require.NoError(t, second.Subscribe("f", sub, nil))
	m := nextFor(t, second, "e", "f")
	require.Equal(t, "f", m.ID, "e was accepted: %s", m.Payload)
	require.Contains(t, string(m.Payload), "RATE_LIMITED")
	healthy(t, p)
}

// liveSubscriptions waits until the server holds n live subscriptions
// (its capstan_live_subscriptions gauge).
func liveSubscriptions(t *testing.T, p *proc, n float64) {
	t.Helper()
	var last map[string]float64
	require.Eventually(t, func() bool {
		g, err := metrics.Scrape(p.url)
		last = g
		return err == nil && g["capstan_live_subscriptions"] == n
	}, 20*time.Second, 10*time.Millisecond, "%v live subscriptions, not %v", last["capstan_live_subscriptions"], n)
}

// nextFor reads a connection's messages until one for any of ids.
func nextFor(t *testing.T, c *gqlws.Conn, ids ...string) gqlws.Message {
	t.Helper()
	for {
		m, err := c.Next()
		require.NoError(t, err)
		if slices.Contains(ids, m.ID) {
			return m
		}
	}
}

// tokensFile writes dir/tokens.yaml with one token per row, each
// "actor organization role token", and returns its path.
func tokensFile(t *testing.T, dir string, rows ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("tokens:\n")
	for _, row := range rows {
		f := strings.Fields(row)
		require.Len(t, f, 4, row)
		fmt.Fprintf(&b, "  - {token: %q, actor: %s, organization: %s, roles: [%s]}\n", f[3], f[0], f[1], f[2])
	}
	path := filepath.Join(dir, "tokens.yaml")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

// TestClientsBehindATrustedProxy: a real server behind a (simulated)
// reverse proxy on 127.0.0.1, named in --trusted-proxies: two WebSockets
// of one client take its two places, its third is refused with a 503
// naming it — even when it writes another's address into the header
// first — and a viewer behind the same proxy still gets its only
// connection.
func TestClientsBehindATrustedProxy(t *testing.T) {
	t.Parallel()
	p := start(t, t.TempDir(), "--trusted-proxies", "127.0.0.1/32", "--max-connections-per-client", "2")
	wsURL := "ws" + strings.TrimPrefix(p.url, "http") + "/graphql"
	dial := func(forwarded string) (*websocket.Conn, *http.Response, error) {
		h := http.Header{"X-Forwarded-For": {forwarded}, "Sec-WebSocket-Protocol": {"graphql-transport-ws"}}
		return websocket.DefaultDialer.Dial(wsURL, h)
	}
	for range 2 {
		c, _, err := dial("203.0.113.7")
		require.NoError(t, err)
		defer c.Close()
	}
	for _, forwarded := range []string{"203.0.113.7", "198.51.100.9, 203.0.113.7"} {
		_, resp, err := dial(forwarded)
		require.Error(t, err)
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		body, _ := io.ReadAll(resp.Body)
		require.Contains(t, string(body), `"client":"203.0.113.7"`, "the refusal names the key")
	}
	req, err := http.NewRequest(http.MethodPost, p.url+"/graphql", strings.NewReader(`{"query":"{ viewer { organization } }"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Forwarded-For", "198.51.100.9")
	got, err := sendGQL(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.status, "the viewer's only connection: %s", got.raw)
	require.Empty(t, got.Errors)
}
