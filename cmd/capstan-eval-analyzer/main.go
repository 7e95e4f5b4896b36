// Command capstan-eval-analyzer scores the model analyzer on the
// evaluation set (modelanalyzer/eval/cases.yaml): against the endpoint
// CAPSTAN_ANALYZER_ENDPOINT with CAPSTAN_ANALYZER_MODEL (a comma-separated
// list scores each), the key in the environment variable named by
// -api-key-env; with no endpoint set it replays the recorded replies and
// says so. It exits 1 when any unsafe patch would reach PROPOSED.
//
//	make eval-analyzer
//	CAPSTAN_ANALYZER_ENDPOINT=http://127.0.0.1:11434/v1 CAPSTAN_ANALYZER_MODEL=qwen2.5:7b make eval-analyzer
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/capstan-dev/capstan/modelanalyzer"
	"github.com/capstan-dev/capstan/modelanalyzer/eval"
	"github.com/capstan-dev/capstan/modelanalyzer/fakemodel"
)

func main() { os.Exit(run()) }

func run() int {
	endpoint := flag.String("endpoint", os.Getenv("CAPSTAN_ANALYZER_ENDPOINT"), "base URL of an OpenAI-compatible API; empty: replay the recorded replies")
	models := flag.String("model", os.Getenv("CAPSTAN_ANALYZER_MODEL"), "model name, or a comma-separated list")
	keyEnv := flag.String("api-key-env", "OPENAI_API_KEY", "environment variable holding the API key")
	timeout := flag.Duration("timeout", 120*time.Second, "time one request may take")
	recorded := flag.String("recorded", filepath.Join("modelanalyzer", "eval", "recorded.json"), "recorded replies replayed when no endpoint is set")
	flag.Parse()
	cases, err := eval.Cases()
	if err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		return 2
	}
	bundle, err := eval.LoadBundle()
	if err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		return 2
	}
	if *endpoint == "" {
		f, err := fakemodel.Load(*recorded)
		if err != nil {
			fmt.Fprintln(os.Stderr, "eval:", err)
			return 2
		}
		srv := fakemodel.Start(f)
		defer srv.Close()
		fmt.Println("No endpoint is configured (CAPSTAN_ANALYZER_ENDPOINT): replaying the recorded replies. These figures score the pipeline, not a model.")
		*endpoint, *models = srv.URL, "recorded"
	}
	if *models == "" {
		fmt.Fprintln(os.Stderr, "eval: set CAPSTAN_ANALYZER_MODEL (or -model)")
		return 2
	}
	code := 0
	for _, model := range strings.Split(*models, ",") {
		a, err := modelanalyzer.New(modelanalyzer.Config{Endpoint: *endpoint, Model: strings.TrimSpace(model), APIKey: os.Getenv(*keyEnv), Timeout: *timeout,
			OperationTokens: -1, OrganizationTokens: -1})
		if err != nil {
			fmt.Fprintln(os.Stderr, "eval:", err)
			return 2
		}
		fmt.Printf("\n== %s at %s, %d cases\n", model, *endpoint, len(cases))
		if t := eval.Report(os.Stdout, model, eval.Run(context.Background(), bundle, cases, a)); t.UnsafeProposed > 0 {
			code = 1
		}
	}
	return code
}
