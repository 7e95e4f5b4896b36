// Package analysis answers ai_analysis nodes and failed jobs with
// structured output (invariant 9): the Analyzer contract an executor asks,
// the input it builds, the packs' failure rules that answer first, and the
// built-in deterministic analyzer. The model behind the contract is
// modelanalyzer; the executor builds the input and checks the answer.
package analysis

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/capstan-dev/capstan"
)

// Analyzer answers an ai_analysis node's question with structured output
// (invariant 9). The executor checks the output before it records it: an
// analyzer never changes state, it only proposes. Implementations must be
// safe for concurrent use; an error is retried as the node's policy says.
type Analyzer interface {
	Analyze(ctx context.Context, in Input) (capstan.Analysis, error)
}

// Input is what an analyzer sees: the question, the operation's
// node runs and evidence so far, the artifacts the node names as inputs
// (secret ones by reference only: invariant 10) and the resource the
// operation changes.
type Input struct {
	Org         string
	OperationID string
	Node        string
	Question    string
	Runs        []capstan.OperationNodeRun
	Evidence    []capstan.Evidence
	Artifacts   []Artifact
	Resource    *capstan.Resource
	// Plan is the operation's plan (its DAG and bindings), Templates the
	// node templates the installed packs publish: a proposal may only
	// use these, and Resources are the catalog facts of the plan's bound
	// resources. Empty where the caller has none.
	Plan      *capstan.Plan
	Templates []capstan.NodeTemplate
	Resources []*capstan.Resource
	// Lookup answers a model's read-only tool calls (nil: no tools).
	Lookup Lookup
	// Redact masks secret values in anything sent out (nil: nothing
	// more to mask than the records already are).
	Redact func(string) string
}

// Lookup reads, for an analyzer's tools, what the input does not
// carry whole. It changes nothing.
type Lookup interface {
	// NodeOutput is the tail of the output a node's job wrote (masked).
	NodeOutput(ctx context.Context, node string) (string, error)
	// Resource is a catalog resource by key, with its relationships.
	Resource(ctx context.Context, key string) (*capstan.Resource, error)
}

// Artifact is an input artifact with the tail of its content
// (empty for a secret one).
type Artifact struct {
	capstan.Artifact
	Content []byte
}

// MaxContent bounds how much of one artifact an analyzer reads.
const MaxContent = 64 << 10

// Deterministic diagnoses from the records alone, with the same
// answer for the same input: a failed node leads (with a retry proposed
// when its error is one a retry can fix), then failed evidence, error
// lines of input artifacts and an unhealthy resource; with none of these
// it reviews and recommends continuing.
type Deterministic struct{}

// DeterministicName names the built-in analyzer.
const DeterministicName = "deterministic"

// Analyze implements Analyzer.
func (Deterministic) Analyze(_ context.Context, in Input) (capstan.Analysis, error) {
	return Diagnose(in), nil
}

// errorLine finds the lines of a log worth a diagnosis.
var errorLine = regexp.MustCompile(`(?i)\b(error|fail(ed|ure)?|fatal|panic|denied|refused|timed? ?out|oomkilled|crashloopbackoff|unhealthy|not ready)\b`)

// Diagnose is the deterministic analyzer's pure decision.
func Diagnose(in Input) capstan.Analysis {
	a := capstan.Analysis{Analyzer: DeterministicName}
	var failed []capstan.OperationNodeRun
	for _, r := range in.Runs {
		if r.NodeID == in.Node || r.Error == "" {
			continue
		}
		switch r.Status {
		case capstan.NodeFailed, capstan.NodeWaitingIntervention, capstan.NodeRetrying:
			failed = append(failed, r)
			a.Findings = append(a.Findings, capstan.AnalysisFinding{Node: r.NodeID, Source: "node_run", Detail: fmt.Sprintf("%s: %s", r.Status, r.Error)})
		}
	}
	for _, e := range in.Evidence {
		if e.Result != capstan.EvidencePassed && e.ProducedBy != in.Node {
			a.Findings = append(a.Findings, capstan.AnalysisFinding{Node: e.ProducedBy, Source: "evidence", Detail: fmt.Sprintf("%s %s", e.Item, e.Result)})
		}
	}
	for _, art := range in.Artifacts {
		for _, line := range errorLines(art.Content, 3) {
			a.Findings = append(a.Findings, capstan.AnalysisFinding{Node: art.ProducedBy, Source: "artifact " + art.Name, Detail: line, Ref: art.StorageRef})
		}
	}
	if res := in.Resource; res != nil && res.HealthStatus != "" && res.HealthStatus != capstan.HealthHealthy && res.HealthStatus != capstan.HealthUnknown {
		a.Findings = append(a.Findings, capstan.AnalysisFinding{Source: "resource " + res.Key(), Detail: fmt.Sprintf("health %s, lifecycle %s", res.HealthStatus, res.LifecycleStatus)})
	}
	switch {
	case len(failed) > 0:
		r := failed[0]
		a.Diagnosis = fmt.Sprintf("node %s %s: %s", r.NodeID, r.Status, r.Error)
		if retryable(r.Error) {
			a.Kind = capstan.AnalysisPatch
			a.Recommendation = "retry " + r.NodeID + ": its error is transient"
			a.ProposedPatch = []capstan.PlanChange{{Op: capstan.ChangeRetry, Node: r.NodeID, Reason: "the failure looks transient (" + r.Error + ")"}}
		} else {
			a.Kind = capstan.AnalysisRecommendation
			a.Recommendation = "fix the cause of " + r.NodeID + "'s failure, record the intervention, and let its verification run again"
		}
	case len(a.Findings) > 0:
		a.Kind = capstan.AnalysisDiagnosis
		details := make([]string, 0, 3)
		for _, f := range a.Findings[:min(3, len(a.Findings))] {
			details = append(details, f.Source+": "+f.Detail)
		}
		a.Diagnosis = strings.Join(details, "; ")
		a.Recommendation = "review the findings before the next step"
	default:
		a.Kind = capstan.AnalysisReview
		a.Diagnosis = "no failure recorded in this operation"
		a.Recommendation = "continue"
	}
	return a
}

// retryable reports whether an error reads as one a retry may fix.
func retryable(reason string) bool {
	r := strings.ToLower(reason)
	for _, s := range []string{"timeout", "timed out", "refused", "unavailable", "temporar", "reset by peer", "try again"} {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

// errorLines returns up to n lines of content that look like errors.
func errorLines(content []byte, n int) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(make([]byte, 0, 4096), MaxContent)
	for sc.Scan() && len(out) < n {
		if line := strings.TrimSpace(sc.Text()); errorLine.MatchString(line) {
			out = append(out, line)
		}
	}
	return out
}

// Name is the actor an analyzer acts as (ai-agent:<name>): its
// Name when it has one.
func Name(a Analyzer) string {
	name := "analyzer"
	if n, ok := a.(interface{ Name() string }); ok {
		name = n.Name()
	} else if _, ok := a.(Deterministic); ok {
		name = DeterministicName
	}
	if capstan.IsAgent(name) {
		return name
	}
	return capstan.AgentPrefix + name
}
