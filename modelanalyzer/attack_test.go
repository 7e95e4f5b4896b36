package modelanalyzer

// Attacks on the analyzer from a hostile model server and hostile
// records (a review's findings, each a regression test): a name or a
// secret that would slip out, a model that would make the server work or
// spend, an answer that would slip past the checks.

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/openai/openai-go/v3"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
	"github.com/capstan-dev/capstan/secret"
)

const secretVal = "PLANTED-s3cr3t-9f2c-abcdefgh"

type srv struct {
	*httptest.Server
	mu    sync.Mutex
	reqs  []string
	reply func(n int, body string) string
}

func newSrv(reply func(n int, body string) string) *srv {
	s := &srv{reply: reply}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, string(b))
		n := len(s.reqs)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, s.reply(n, string(b)))
	}))
	return s
}

func completionBody(msg map[string]any, finish string, pt, ct int64) string {
	b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   map[string]any{"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}})
	return string(b)
}

func answerBody(content string) string {
	return completionBody(map[string]any{"role": "assistant", "content": content}, "stop", 10, 10)
}

func toolCallsBody(n int, name, args string) string {
	calls := make([]any, n)
	for i := range calls {
		calls[i] = map[string]any{"id": fmt.Sprintf("c%d", i), "type": "function", "function": map[string]any{"name": name, "arguments": args}}
	}
	return completionBody(map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}, "tool_calls", 10, 10)
}

const okAnswer = `{"kind":"review","diagnosis":"d","recommendation":"r","findings":[],"proposed_patch":[],"missing_capabilities":[]}`

type countingLookup struct {
	n   atomic.Int64
	res map[string]*capstan.Resource
	out string
}

func (l *countingLookup) NodeOutput(_ context.Context, node string) (string, error) {
	return l.out, nil
}
func (l *countingLookup) Resource(_ context.Context, key string) (*capstan.Resource, error) {
	l.n.Add(1)
	if r, ok := l.res[key]; ok {
		return r, nil
	}
	return nil, capstan.Errorf(capstan.ENOTFOUND, "no resource %s", key)
}

func baseInput(l analysis.Lookup) analysis.Input {
	red := secret.NewRedactor([][]byte{[]byte(secretVal)})
	return analysis.Input{Org: "acme", OperationID: "op-1", Node: "diagnose", Question: "why?",
		Runs:   []capstan.OperationNodeRun{{NodeID: "pull", Status: capstan.NodeFailed, Attempts: 1, Error: "boom"}},
		Plan:   &capstan.Plan{Nodes: []capstan.PlanNode{{ID: "pull", Type: capstan.NodeJob}}},
		Lookup: l, Redact: red.String}
}

func newA(t *testing.T, url string, tweak ...func(*Config)) *Analyzer {
	cfg := Config{Endpoint: url + "/v1", Model: "m", Retries: -1,
		Mask: []*regexp.Regexp{regexp.MustCompile(`\bworker-\d+\.prod\.acme\.internal\b`), regexp.MustCompile(`Smith & Sons`)}}
	for _, f := range tweak {
		f(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestNamesAreMaskedBeforeJSONEscapes(t *testing.T) {
	s := newSrv(func(int, string) string { return answerBody(okAnswer) })
	defer s.Close()
	in := baseInput(nil)
	in.Artifacts = []analysis.Artifact{{Artifact: capstan.Artifact{Name: "log", ProducedBy: "pull"},
		Content: []byte("first line\n10.0.9.1 - GET /v2/ 502\n\tworker-3.prod.acme.internal down\ncustomer Smith & Sons <ok>\n")}}
	_, err := newA(t, s.URL).Analyze(context.Background(), in)
	require.NoError(t, err)
	for _, leak := range []string{"10.0.9.1", "worker-3.prod.acme.internal", `Smith \u0026 Sons`, "Smith & Sons"} {
		require.NotContains(t, s.reqs[0], leak)
	}
}

func TestAToolResultIsScrubbedBeforeItIsCut(t *testing.T) {
	mk := func(pad int, val string) *capstan.Resource {
		return &capstan.Resource{Type: "compute.node", Name: "w",
			ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "x", Attributes: map[string]any{"a": strings.Repeat("y", pad), "b": val}}}}
	}
	for _, pad := range []int{maxString - 10, maxToolResult - 40} {
		for _, val := range []string{secretVal, "worker-3.prod.acme.internal"} {
			l := &countingLookup{res: map[string]*capstan.Resource{"compute.node/w": mk(pad, val)}}
			s := newSrv(func(n int, _ string) string {
				if n == 1 {
					return toolCallsBody(1, "resource", `{"key":"compute.node/w"}`)
				}
				return answerBody(okAnswer)
			})
			_, err := newA(t, s.URL).Analyze(context.Background(), baseInput(l))
			s.Close()
			require.NoError(t, err)
			require.NotContains(t, s.reqs[1], val[:10])
		}
	}
}

func TestToolCallsAreBounded(t *testing.T) {
	worker := &capstan.Resource{Type: "compute.node", Name: "w"}
	for i := range 50 {
		worker.Relationships = append(worker.Relationships, capstan.Relationship{Type: capstan.RelDependsOn, Target: fmt.Sprintf("x/%d", i)})
	}
	l := &countingLookup{res: map[string]*capstan.Resource{"compute.node/w": worker}}
	for _, perAnswer := range []int{5000, maxCallsPerAnswer} {
		s := newSrv(func(n int, _ string) string {
			if n <= 4 {
				return toolCallsBody(perAnswer, "dependencies", `{"key":"compute.node/w"}`)
			}
			return answerBody(okAnswer)
		})
		_, err := newA(t, s.URL).Analyze(context.Background(), baseInput(l))
		s.Close()
		require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
	}
	require.LessOrEqual(t, l.n.Load(), int64(maxCallsPerAnalysis*(maxDependencies+1)), "the lookups a model can cause are bounded")
	s := newSrv(func(n int, _ string) string {
		if n == 1 {
			return toolCallsBody(1, strings.Repeat("t", 5000), `{"key":"`+strings.Repeat("k", 5000)+`"}`)
		}
		return answerBody(okAnswer)
	})
	defer s.Close()
	a, err := newA(t, s.URL).Analyze(context.Background(), baseInput(l))
	require.NoError(t, err)
	require.LessOrEqual(t, len(a.Model.ToolCalls[0].Tool), 70)
	require.Equal(t, "no such tool", a.Model.ToolCalls[0].Error)
}

func TestTheBudgetHoldsAcrossRoundsAndAgainstNegativeUsage(t *testing.T) {
	l := &countingLookup{res: map[string]*capstan.Resource{}}
	s := newSrv(func(n int, _ string) string {
		if n <= 4 {
			return completionBody(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c", "type": "function",
				"function": map[string]any{"name": "evidence", "arguments": `{"id":"x"}`}}}}, "tool_calls", 1000, 0)
		}
		return answerBody(okAnswer)
	})
	defer s.Close()
	a := newA(t, s.URL, func(c *Config) { c.OperationTokens, c.OrganizationTokens, c.MaxTokens = 2500, 100000, 50 })
	_, err := a.Analyze(context.Background(), baseInput(l))
	require.Equal(t, capstan.ERATELIMITED, capstan.ErrorCode(err), "checked before every request, not once")
	require.LessOrEqual(t, a.budget.ops["acme/op-1"], int64(2500+1000), "past the cap by one request's spending at most")

	s2 := newSrv(func(int, string) string {
		return completionBody(map[string]any{"role": "assistant", "content": okAnswer}, "stop", -1_000_000_000, 0)
	})
	defer s2.Close()
	a2 := newA(t, s2.URL, func(c *Config) { c.OperationTokens, c.OrganizationTokens = 100000, 100000 })
	an, err := a2.Analyze(context.Background(), baseInput(l))
	require.NoError(t, err)
	require.Zero(t, an.Model.PromptTokens)
	require.GreaterOrEqual(t, a2.budget.ops["acme/op-1"], int64(0), "a negative count refills nothing")
}

func TestLenientAnswersAreRefused(t *testing.T) {
	for _, c := range []string{
		okAnswer + `]]}`,
		okAnswer + okAnswer,
		`{"KIND":"review","Diagnosis":"d","recommendation":"r","findings":[],"proposed_patch":[],"missing_capabilities":[]}`,
		`{"kind":"patch","kind":"review","diagnosis":"d","recommendation":"r","findings":[],"proposed_patch":[],"missing_capabilities":[]}`,
		`{"kind":"review"}`,
	} {
		_, err := decodeAnswer("stop", "", c)
		require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), c)
	}
	_, err := decodeAnswer("stop", "", okAnswer)
	require.NoError(t, err)
}

type nilLookup struct{}

func (nilLookup) NodeOutput(context.Context, string) (string, error)          { return "", nil }
func (nilLookup) Resource(context.Context, string) (*capstan.Resource, error) { return nil, nil }

func TestALookupAnsweringNothingIsNotFound(t *testing.T) {
	s := newSrv(func(n int, _ string) string {
		if n == 1 {
			return toolCallsBody(1, "resource", `{"key":"a/b"}`)
		}
		return answerBody(okAnswer)
	})
	defer s.Close()
	in := baseInput(nilLookup{})
	in.Resources = []*capstan.Resource{nil}
	a, err := newA(t, s.URL).Analyze(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, "not found", a.Model.ToolCalls[0].Error)
}

func TestTwoAnalysesOfOneInputDoNotShareWrites(t *testing.T) {
	l := &countingLookup{res: map[string]*capstan.Resource{"compute.node/a": {Type: "compute.node", Name: "a"}}}
	s := newSrv(func(n int, body string) string {
		if !strings.Contains(body, `"role":"tool"`) {
			return toolCallsBody(1, "resource", `{"key":"compute.node/a"}`)
		}
		return answerBody(okAnswer)
	})
	defer s.Close()
	a := newA(t, s.URL)
	in := baseInput(l)
	in.Resources = make([]*capstan.Resource, 1, 8)
	in.Resources[0] = &capstan.Resource{Type: "compute.node", Name: "b"}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = a.Analyze(context.Background(), in) }()
	}
	wg.Wait()
	require.Nil(t, in.Resources[:2][1], "the caller's array is untouched")
}

func TestAPlaceholderLookalikeIsNeverRestored(t *testing.T) {
	m := newMasker([]*regexp.Regexp{regexp.MustCompile(`host-\S+`)})
	p := m.mask(`the log says MASK_1 is fine; 10.0.3.7 is down; host-10.0.0.9 too`)
	require.Contains(t, p, "MASK_1 is fine")
	require.NotContains(t, p, "10.0.")
	a := &Answer{Diagnosis: p}
	m.unmaskAnswer(a)
	require.Equal(t, `the log says MASK_1 is fine; 10.0.3.7 is down; host-10.0.0.9 too`, a.Diagnosis)
}

func TestLiteralCredentialsAtAnyDepthAreMasked(t *testing.T) {
	r := &capstan.Resource{Type: "db", Name: "x", ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "postgres",
		Attributes: map[string]any{"credentials": map[string]any{"user": "app", "pass": "hunter2-literal"}, "admin": map[string]any{"password": "hunter3-literal"},
			"token": []any{"tok-literal"}, "db_password": "secret:db-pass"}}}}
	out, err := scrubber{mask: newMasker(nil)}.encode(resourceFacts(r), false)
	require.NoError(t, err)
	for _, leak := range []string{"hunter2-literal", "hunter3-literal", "tok-literal"} {
		require.NotContains(t, out, leak)
	}
	require.Contains(t, out, "secret:db-pass", "a reference is not a value")
}

func TestMalformedResponsesAndCancellationAreTyped(t *testing.T) {
	for _, body := range []string{`not json at all <script>`, `{"choices": "x"}`} {
		s := newSrv(func(int, string) string { return body })
		_, err := newA(t, s.URL).Analyze(context.Background(), baseInput(nil))
		s.Close()
		require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%q: %v", body, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := newSrv(func(int, string) string { return answerBody(okAnswer) })
	defer s.Close()
	_, err := newA(t, s.URL).Analyze(ctx, baseInput(nil))
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err))
	require.Contains(t, capstan.ErrorMessage(err), "cancelled")
}

func TestTheServersEnvironmentIsNotSentToTheModel(t *testing.T) {
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Internal-Token: internal-LEAKED")
	t.Setenv("OPENAI_ORG_ID", "org-LEAKED")
	var hdr http.Header
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answerBody(okAnswer))
	}))
	defer s.Close()
	a, err := New(Config{Endpoint: s.URL, Model: "m", APIKey: "sk-configured"})
	require.NoError(t, err)
	_, err = a.Analyze(context.Background(), baseInput(nil))
	require.NoError(t, err)
	require.Equal(t, "Bearer sk-configured", hdr.Get("Authorization"))
	require.Empty(t, hdr.Get("X-Internal-Token"))
	require.Empty(t, hdr.Get("OpenAI-Organization"))
}

func TestToolsCannotConfirmAGuessOfAMaskedName(t *testing.T) {
	var calls []any
	for x := range maxCallsPerAnswer {
		calls = append(calls, map[string]any{"id": fmt.Sprintf("g%d", x), "type": "function",
			"function": map[string]any{"name": "node_output", "arguments": fmt.Sprintf(`{"node":"10.0.3.%d"}`, x+3)}})
	}
	s := newSrv(func(n int, _ string) string {
		if n == 1 {
			return completionBody(map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}, "tool_calls", 1, 1)
		}
		return answerBody(okAnswer)
	})
	defer s.Close()
	in := baseInput(&countingLookup{})
	in.Runs[0].Error = "unreachable from 10.0.3.7"
	_, err := newA(t, s.URL).Analyze(context.Background(), in)
	require.NoError(t, err)
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(s.reqs[1]), &req))
	var answers []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			answers = append(answers, fmt.Sprint(m.Content))
		}
	}
	require.Len(t, answers, maxCallsPerAnswer)
	for _, a := range answers {
		require.Equal(t, answers[0], a, "every guess, right or wrong, gets the same answer")
	}
	require.NotContains(t, s.reqs[0], "10.0.3.7")
}

// TestEveryIPv4AddressIsMasked: an address is masked wherever a sentence
// or a name puts it — before a full stop too (issue 42) — and a version
// with more than four numbers is left alone.
func TestEveryIPv4AddressIsMasked(t *testing.T) {
	for _, c := range []struct {
		in, leak string
		kept     string
	}{
		{in: "dial 10.20.30.41.", leak: "10.20.30.41"},
		{in: "dial 10.20.30.41.\nnext", leak: "10.20.30.41"},
		{in: "at 10.20.30.41. Then it failed", leak: "10.20.30.41"},
		{in: "10.20.30.41:5000 refused", leak: "10.20.30.41"},
		{in: "(10.20.30.41)", leak: "10.20.30.41"},
		{in: "node.10.20.30.41 is down", leak: "10.20.30.41"},
		{in: "peers 10.0.0.1,10.0.0.2.", leak: "10.0.0.2"},
		{in: "tempo 2.4.1.0.7 released", kept: "2.4.1.0.7"},
		{in: "node ip-10-0-3-7.ec2.internal is down", leak: "ip-10-0-3-7"},
		{in: "1.1.1.1,2.2.2.2 and 3.3.3.3", leak: "2.2.2.2"},
	} {
		m := newMasker(nil)
		got := m.mask(c.in)
		if c.leak != "" {
			require.NotContains(t, got, c.leak, c.in)
			a := &Answer{Diagnosis: got}
			m.unmaskAnswer(a)
			require.Equal(t, c.in, a.Diagnosis, "the answer gets it back")
		} else {
			require.Contains(t, got, c.kept, c.in)
		}
	}
}

// TestAServerCannotRefillItsBudget: usage that is missing, negative or
// smaller than the prompt that was sent counts as the request's own
// estimate of it.
func TestAServerCannotRefillItsBudget(t *testing.T) {
	for _, c := range []struct {
		prompt, completion int64
		response           int
		want               int64
		name               string
	}{
		{prompt: 900, completion: 100, want: 1000},
		{prompt: 0, completion: 0, want: 5000},
		{prompt: -1_000_000, completion: 10, want: 5000},
		{prompt: 10, completion: -5, want: 5000},
		{prompt: 1, completion: 1, want: 800},
		{prompt: 1, completion: 0, response: 8000, want: 2800, name: "an answer it says cost nothing"},
		{prompt: 9_000_000, completion: 9_000_000, response: 800, want: 3200 + 800 + 4200, name: "a reply that would spend the day: at most a token a byte, and the completion limit"},
	} {
		got := spent(openai.CompletionUsage{PromptTokens: c.prompt, CompletionTokens: c.completion}, 5000, 4200, 3200, c.response)
		require.Equal(t, c.want, got, "%+v", c)
	}
}

// BenchmarkMaskAddresses is the masker over 64 KiB of IPv4 addresses (a
// job that prints a table of them): one pass, linear (it was quadratic:
// 26 s for one such string). Its floor: the same text scanned by the
// candidate regexp alone.
func BenchmarkMaskAddresses(b *testing.B) {
	var text strings.Builder
	for i := 0; text.Len() < 64<<10; i++ {
		fmt.Fprintf(&text, "10.%d.%d.%d ", i>>16&255, i>>8&255, i&255)
	}
	s := text.String()
	b.Run("mask", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			newMasker(nil).mask(s)
		}
	})
	b.Run("floor-find", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			ipv4.FindAllStringIndex(s, -1)
		}
	})
}
