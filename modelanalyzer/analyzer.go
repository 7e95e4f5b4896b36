package modelanalyzer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
)

// Name is the analyzer's name on its analyses and its proposals' author.
const Name = capstan.AgentPrefix + "model"

// Config configures the model analyzer. Endpoint and Model are required;
// the key is resolved by the caller from a secret: reference.
type Config struct {
	Endpoint    string // base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1
	Model       string
	APIKey      string
	Timeout     time.Duration // per request, retries included (default 60 s)
	MaxTokens   int64         // completion tokens per request (default 2,000)
	Temperature float64
	// Retries of a request the server throttled (429, honouring
	// Retry-After) or failed (5xx): default 2.
	Retries int
	// MaxToolRounds caps the rounds of read-only tool calls (default 4).
	MaxToolRounds int
	// Budgets of tokens per operation and per organization per UTC day
	// (0: no cap).
	OperationTokens, OrganizationTokens int64
	// Prices per million prompt and completion tokens, for the cost an
	// analysis records (0: not recorded).
	PromptPrice, CompletionPrice float64
	// Mask are the names policy marks sensitive (host names, customer
	// names …): masked reversibly before anything leaves (mask.go).
	Mask []*regexp.Regexp
	// HTTPClient overrides the HTTP client (tests); its responses are
	// still limited to maxResponse bytes.
	HTTPClient *http.Client
	Now        func() time.Time
}

// Analyzer is the model analyzer; safe for concurrent use.
type Analyzer struct {
	cfg    Config
	client openai.Client
	schema map[string]any
	budget *budget
}

// New checks cfg and returns the analyzer.
func New(cfg Config) (*Analyzer, error) {
	var p capstan.Problems
	if cfg.Endpoint == "" {
		p.Addf("the analyzer's endpoint is not set")
	}
	if cfg.Model == "" {
		p.Addf("the analyzer's model is not set")
	}
	if err := p.Err("model analyzer"); err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 2000
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	} else if cfg.Retries == 0 {
		cfg.Retries = 2
	}
	if cfg.MaxToolRounds <= 0 {
		cfg.MaxToolRounds = 4
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	limited := *hc
	limited.Transport = guardTransport{next: transportOf(hc)}
	client := openai.NewClient(option.WithBaseURL(cfg.Endpoint), option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(&limited), option.WithMaxRetries(cfg.Retries), option.WithRequestTimeout(cfg.Timeout))
	return &Analyzer{cfg: cfg, client: client, schema: Schema(),
		budget: newBudget(cfg.OperationTokens, cfg.OrganizationTokens, cfg.Now)}, nil
}

// session is one analysis under way.
type session struct {
	in    analysis.Input
	mask  *masker
	scrub scrubber
	known map[string]bool // what a finding may cite (citable), growing with the resources tools read
	rec   *capstan.AnalysisModel
}

// Analyze implements analysis.Analyzer: it asks the model, with the
// operation's records scrubbed, lets it call read-only tools a bounded
// number of times, and checks its answer before returning it. The whole
// analysis is bounded by Timeout per round.
// Name is the actor the model acts as.
func (a *Analyzer) Name() string { return Name }

func (a *Analyzer) Analyze(ctx context.Context, in analysis.Input) (capstan.Analysis, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout*time.Duration(a.cfg.MaxToolRounds+1))
	defer cancel()
	in.Resources = slices.Clip(in.Resources) // a tool's read appends to our copy, never to the caller's array
	m := newMasker(a.cfg.Mask)
	s := &session{in: in, mask: m, scrub: scrubber{redact: in.Redact, mask: m}, known: citable(in), rec: &capstan.AnalysisModel{Name: a.cfg.Model}}
	prompt, err := userPrompt(in, s.scrub)
	if err != nil {
		return capstan.Analysis{}, capstan.Errorf(capstan.EINTERNAL, "the analysis input cannot be encoded: %v", err)
	}
	messages := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(systemPrompt), openai.UserMessage(prompt)}
	digest := sha256.New()
	hashed := 0
	start := a.cfg.Now()
	defer func() { s.rec.LatencyMS = a.cfg.Now().Sub(start).Milliseconds() }()
	for round := 0; ; round++ {
		for _, msg := range messages[hashed:] { // each message once, in order
			data, _ := json.Marshal(msg)
			digest.Write(data)
		}
		hashed = len(messages)
		tools := round < a.cfg.MaxToolRounds && in.Lookup != nil
		resp, err := a.ask(ctx, in, a.params(messages, tools), len(prompt))
		if err != nil {
			return capstan.Analysis{}, err
		}
		s.rec.PromptTokens += tokens(resp.Usage.PromptTokens)
		s.rec.CompletionTokens += tokens(resp.Usage.CompletionTokens)
		if len(resp.Choices) == 0 {
			return capstan.Analysis{}, invalid("the answer has no choice")
		}
		choice := resp.Choices[0]
		if calls := choice.Message.ToolCalls; len(calls) > 0 {
			switch {
			case !tools && in.Lookup == nil:
				return capstan.Analysis{}, invalid("the model called tools although none were offered")
			case !tools:
				return capstan.Analysis{}, invalid("the model kept calling tools after %d rounds", a.cfg.MaxToolRounds)
			case len(calls) > maxCallsPerAnswer:
				return capstan.Analysis{}, invalid("%d tool calls in one answer: at most %d", len(calls), maxCallsPerAnswer)
			case len(s.rec.ToolCalls)+len(calls) > maxCallsPerAnalysis:
				return capstan.Analysis{}, invalid("more than %d tool calls in one analysis", maxCallsPerAnalysis)
			}
			messages = append(messages, choice.Message.ToParam())
			for _, call := range calls {
				messages = append(messages, openai.ToolMessage(s.runTool(ctx, call.Function.Name, call.Function.Arguments), call.ID))
			}
			continue
		}
		s.rec.PromptDigest = "sha256:" + hex.EncodeToString(digest.Sum(nil))
		s.rec.Cost = a.cost(s.rec)
		ans, err := decodeAnswer(choice.FinishReason, choice.Message.Refusal, choice.Message.Content)
		if err != nil {
			return capstan.Analysis{}, err
		}
		m.unmaskAnswer(ans)
		return analysisOf(ans, s)
	}
}

// ask sends one request within the budgets: an estimate of what it may
// spend is reserved before it is sent and settled with what it spent.
func (a *Analyzer) ask(ctx context.Context, in analysis.Input, params openai.ChatCompletionNewParams, promptBytes int) (*openai.ChatCompletion, error) {
	estimate := a.cfg.MaxTokens + int64(promptBytes)/4
	if err := a.budget.reserve(in.Org, in.OperationID, estimate); err != nil {
		return nil, err
	}
	resp, err := a.client.Chat.Completions.New(ctx, params)
	if err != nil {
		a.budget.settle(in.Org, in.OperationID, estimate, 0)
		return nil, requestError(ctx, err)
	}
	a.budget.settle(in.Org, in.OperationID, estimate, spent(resp.Usage, estimate, a.cfg.MaxTokens, promptBytes, len(resp.RawJSON())))
	return resp, nil
}

// spent is what a request counts against the budgets: what the server
// says it spent, but never less than what this process sent and received
// (a quarter of their bytes), and the whole estimate when the server
// reports no usage, or a negative one — a server cannot refill a budget
// by under-reporting — and never more than the request could have cost
// (a token per byte sent and received, and the completion limit): a
// server cannot spend an organization's day with one reply.
func spent(u openai.CompletionUsage, estimate, maxTokens int64, promptBytes, responseBytes int) int64 {
	if u.PromptTokens <= 0 || u.CompletionTokens < 0 {
		return estimate
	}
	floor := int64(promptBytes+responseBytes) / 4
	ceiling := int64(promptBytes+responseBytes) + maxTokens
	return min(max(tokens(u.PromptTokens)+tokens(u.CompletionTokens), floor), max(ceiling, floor))
}

// tokens is a count a server reported, held to a sane range: a negative
// count must not refill a budget.
func tokens(n int64) int64 { return min(max(n, 0), 10_000_000) }

// params is one Chat Completions request: the strict answer schema, and
// the read-only tools while rounds are left.
func (a *Analyzer) params(messages []openai.ChatCompletionMessageParamUnion, tools bool) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:               shared.ChatModel(a.cfg.Model),
		Messages:            messages,
		MaxCompletionTokens: openai.Int(a.cfg.MaxTokens),
		Temperature:         openai.Float(a.cfg.Temperature),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "capstan_analysis", Schema: a.schema, Strict: openai.Bool(true),
				Description: openai.String("a diagnosis of a failed operation, with cited findings and changes only from the plan-change vocabulary")}}},
	}
	if tools {
		p.Tools = toolDefinitions
	}
	return p
}

// cost prices what the analysis spent.
func (a *Analyzer) cost(r *capstan.AnalysisModel) float64 {
	return (float64(r.PromptTokens)*a.cfg.PromptPrice + float64(r.CompletionTokens)*a.cfg.CompletionPrice) / 1e6
}

// requestError types a failed request: a timeout or an unreachable or
// failing server is UNAVAILABLE, throttling past the retries
// RATE_LIMITED, anything else the server refused INVALID.
func requestError(ctx context.Context, err error) error {
	var apiErr *openai.Error
	switch {
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusTooManyRequests:
		return capstan.Errorf(capstan.ERATELIMITED, "the model's server is throttling: %d", apiErr.StatusCode)
	case errors.As(err, &apiErr) && apiErr.StatusCode >= 500:
		return capstan.Errorf(capstan.EUNAVAILABLE, "the model's server failed: %d", apiErr.StatusCode)
	case errors.As(err, &apiErr):
		return capstan.Errorf(capstan.EINVALID, "the model's server refused the request: %d", apiErr.StatusCode)
	case errors.Is(err, errBodyTooLarge):
		return invalid("the answer is larger than %d bytes", maxResponse)
	case errors.Is(ctx.Err(), context.Canceled):
		return capstan.Errorf(capstan.EUNAVAILABLE, "the analysis was cancelled")
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return capstan.Errorf(capstan.EUNAVAILABLE, "the model did not answer in time")
	case unreachable(err):
		return capstan.Errorf(capstan.EUNAVAILABLE, "the model's server cannot be reached: %v", err)
	}
	return invalid("the server's response is not a chat completion: %.200v", err)
}

// invalid is an answer the analyzer cannot accept: retried as the node's
// policy says, then the node asks for attention with this reason.
func invalid(format string, args ...any) error {
	return capstan.Errorf(capstan.EINVALID, "model answer rejected: "+format, args...)
}
