package main

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
	"github.com/capstan-dev/capstan/modelanalyzer"
	"github.com/capstan-dev/capstan/secret"
)

// analyzerConfig is how serve answers ai_analysis nodes and analyzes
// failures no pack rule knows: the built-in deterministic analyzer, or a
// model behind an OpenAI-compatible endpoint (docs/ANALYZER.md).
type analyzerConfig struct {
	kind, endpoint, model, apiKey, mask string
	timeout                             time.Duration
	maxTokens                           int64
	temperature                         float64
	operationTokens, organizationTokens int64
	rules                               string
}

func addAnalyzerFlags(fs *flag.FlagSet, c *analyzerConfig) {
	fs.StringVar(&c.kind, "analyzer", envOr("CAPSTAN_ANALYZER", "deterministic"), "what answers ai_analysis nodes after the packs' rules: deterministic, or openai (any OpenAI-compatible server) (CAPSTAN_ANALYZER)")
	fs.StringVar(&c.endpoint, "analyzer-endpoint", envOr("CAPSTAN_ANALYZER_ENDPOINT", ""), "base URL of the OpenAI-compatible API, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1 (CAPSTAN_ANALYZER_ENDPOINT)")
	fs.StringVar(&c.model, "analyzer-model", envOr("CAPSTAN_ANALYZER_MODEL", ""), "model name (CAPSTAN_ANALYZER_MODEL)")
	fs.StringVar(&c.apiKey, "analyzer-api-key", envOr("CAPSTAN_ANALYZER_API_KEY", ""), "the API key as a reference secret:ORG/NAME to the secret store; empty for a server without keys (CAPSTAN_ANALYZER_API_KEY)")
	fs.DurationVar(&c.timeout, "analyzer-timeout", envDuration("CAPSTAN_ANALYZER_TIMEOUT", 60*time.Second), "time one request to the model may take, retries included (CAPSTAN_ANALYZER_TIMEOUT)")
	fs.Int64Var(&c.maxTokens, "analyzer-max-tokens", int64(envInt("CAPSTAN_ANALYZER_MAX_TOKENS", 2000)), "completion tokens per request (CAPSTAN_ANALYZER_MAX_TOKENS)")
	fs.Float64Var(&c.temperature, "analyzer-temperature", envFloat("CAPSTAN_ANALYZER_TEMPERATURE", 0), "sampling temperature (CAPSTAN_ANALYZER_TEMPERATURE)")
	fs.Int64Var(&c.operationTokens, "analyzer-operation-tokens", int64(envInt("CAPSTAN_ANALYZER_OPERATION_TOKENS", 200000)), "tokens the model may spend on one operation; 0 for no cap (CAPSTAN_ANALYZER_OPERATION_TOKENS)")
	fs.Int64Var(&c.organizationTokens, "analyzer-organization-tokens", int64(envInt("CAPSTAN_ANALYZER_ORGANIZATION_TOKENS", 2000000)), "tokens the model may spend for one organization per UTC day; 0 for no cap (CAPSTAN_ANALYZER_ORGANIZATION_TOKENS)")
	fs.StringVar(&c.rules, "analyzer-rules", envOr("CAPSTAN_ANALYZER_RULES", "on"), "on: the packs' failure rules answer the failures they know before the analyzer; off: the analyzer answers every one (to evaluate or show a model) (CAPSTAN_ANALYZER_RULES)")
	fs.StringVar(&c.mask, "analyzer-mask", envOr("CAPSTAN_ANALYZER_MASK", ""), "comma-separated regular expressions of names masked before anything reaches the model (host names, customers); IPv4 addresses always are (CAPSTAN_ANALYZER_MASK)")
}

// openAnalyzer builds the configured analyzer; nil means the executor's
// default (deterministic).
func openAnalyzer(ctx context.Context, c analyzerConfig, secrets secret.Store) (analysis.Analyzer, error) {
	if c.rules != "on" && c.rules != "off" {
		return nil, capstan.Errorf(capstan.EINVALID, "--analyzer-rules %q: on or off", c.rules)
	}
	switch c.kind {
	case "", "deterministic":
		return nil, nil
	case "openai":
	default:
		return nil, capstan.Errorf(capstan.EINVALID, "--analyzer %q: deterministic or openai", c.kind)
	}
	cfg := modelanalyzer.Config{Endpoint: c.endpoint, Model: c.model, Timeout: c.timeout, MaxTokens: c.maxTokens, Temperature: c.temperature,
		OperationTokens: c.operationTokens, OrganizationTokens: c.organizationTokens}
	if c.apiKey != "" {
		ref, ok := strings.CutPrefix(c.apiKey, "secret:")
		org, name, found := strings.Cut(ref, "/")
		if !ok || !found || org == "" || name == "" {
			return nil, capstan.Errorf(capstan.EINVALID, "--analyzer-api-key: a reference secret:ORG/NAME to the secret store, never the key itself")
		}
		key, err := secrets.Get(ctx, org, name)
		if err != nil {
			return nil, fmt.Errorf("--analyzer-api-key %s: %w", c.apiKey, err)
		}
		cfg.APIKey = string(key)
	}
	for _, p := range strings.Split(c.mask, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, capstan.Errorf(capstan.EINVALID, "--analyzer-mask %q: %v", p, err)
		}
		cfg.Mask = append(cfg.Mask, re)
	}
	return modelanalyzer.New(cfg)
}
