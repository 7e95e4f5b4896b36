package executor

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/artifact"
)

// Analyzer answers an ai_analysis node's question with structured output
// (invariant 9). The executor checks the output before it records it: an
// analyzer never changes state, it only proposes. Implementations must be
// safe for concurrent use; an error is retried as the node's policy says.
type Analyzer interface {
	Analyze(ctx context.Context, in AnalysisInput) (capstan.Analysis, error)
}

// AnalysisInput is what an analyzer sees: the question, the operation's
// node runs and evidence so far, the artifacts the node names as inputs
// (secret ones by reference only: invariant 10) and the resource the
// operation changes.
type AnalysisInput struct {
	Org         string
	OperationID string
	Node        string
	Question    string
	Runs        []capstan.OperationNodeRun
	Evidence    []capstan.Evidence
	Artifacts   []AnalysisArtifact
	Resource    *capstan.Resource
	// Plan is the operation's plan (its DAG and bindings), Templates the
	// node templates the installed packs publish: a proposal may only
	// use these, and Resources are the catalog facts of the plan's bound
	// resources. Empty where the caller has none.
	Plan      *capstan.Plan
	Templates []capstan.NodeTemplate
	Resources []*capstan.Resource
	// Lookup answers a model's read-only tool calls (nil: no tools).
	Lookup AnalysisLookup
	// Redact masks secret values in anything sent out (nil: nothing
	// more to mask than the records already are).
	Redact func(string) string
}

// AnalysisLookup reads, for an analyzer's tools, what the input does not
// carry whole. It changes nothing.
type AnalysisLookup interface {
	// NodeOutput is the tail of the output a node's job wrote (masked).
	NodeOutput(ctx context.Context, node string) (string, error)
	// Resource is a catalog resource by key, with its relationships.
	Resource(ctx context.Context, key string) (*capstan.Resource, error)
}

// AnalysisArtifact is an input artifact with the tail of its content
// (empty for a secret one).
type AnalysisArtifact struct {
	capstan.Artifact
	Content []byte
}

// maxAnalysisContent bounds how much of one artifact an analyzer reads.
const maxAnalysisContent = 64 << 10

// DeterministicAnalyzer diagnoses from the records alone, with the same
// answer for the same input: a failed node leads (with a retry proposed
// when its error is one a retry can fix), then failed evidence, error
// lines of input artifacts and an unhealthy resource; with none of these
// it reviews and recommends continuing.
type DeterministicAnalyzer struct{}

// DeterministicAnalyzerName names the built-in analyzer.
const DeterministicAnalyzerName = "deterministic"

// Analyze implements Analyzer.
func (DeterministicAnalyzer) Analyze(_ context.Context, in AnalysisInput) (capstan.Analysis, error) {
	return Diagnose(in), nil
}

// errorLine finds the lines of a log worth a diagnosis.
var errorLine = regexp.MustCompile(`(?i)\b(error|fail(ed|ure)?|fatal|panic|denied|refused|timed? ?out|oomkilled|crashloopbackoff|unhealthy|not ready)\b`)

// Diagnose is the deterministic analyzer's pure decision.
func Diagnose(in AnalysisInput) capstan.Analysis {
	a := capstan.Analysis{Analyzer: DeterministicAnalyzerName}
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
	sc.Buffer(make([]byte, 0, 4096), maxAnalysisContent)
	for sc.Scan() && len(out) < n {
		if line := strings.TrimSpace(sc.Text()); errorLine.MatchString(line) {
			out = append(out, line)
		}
	}
	return out
}

// analysis runs the analyzer on a worker and records its checked output
// as the node's evidence: passed when the output is structured as
// invariant 9 asks, failed (with why) when it is not. An analyzer error is
// an attempt error, retried as the node's policy says.
func (l *loop) analysis(ctx context.Context, n *capstan.PlanNode, r nodeResult, scope attemptScope) nodeResult {
	packs, err := l.e.cfg.Store.ListPacks(ctx, l.org)
	var in AnalysisInput
	if err == nil {
		in, err = l.analysisInput(ctx, n, scope.resource, scope.plan, packs)
	}
	if err != nil {
		r.res = Result{ExitCode: -1, ErrKind: "analyzer", Err: fmt.Errorf("analysis input: %w", err)}
		return r
	}
	var rules []capstan.FailureRule // none when the node asks for the model
	if !l.e.cfg.SkipRules && (n.Analysis == nil || !n.Analysis.Model) {
		rules = FailureRules(packs)
	}
	a, err := l.analyze(ctx, in, rules)
	if err != nil {
		r.res = Result{ExitCode: -1, ErrKind: "analyzer", Err: fmt.Errorf("analyzer: %w", err)}
		return r
	}
	ev := capstan.Evidence{ProducedBy: n.ID, Item: "analysis", Result: capstan.EvidencePassed, ObservedAt: *l.now(), Source: a.Source(in.Question)}
	if n.Analysis != nil && n.Analysis.Output != "" {
		ev.Item = n.Analysis.Output
	}
	if err := a.Check(func(id string) bool { return scope.nodes[id] != nil }); err != nil {
		ev.Result = capstan.EvidenceFailed
		ev.Source = map[string]any{"type": capstan.EvidenceSourceAnalysis, "analyzer": a.Analyzer, "rejected": capstan.ErrorMessage(err)}
	}
	r.evidence = append(r.evidence, ev)
	return r
}

// analyze answers in: the failure rules first, the configured analyzer
// when none matched.
func (l *loop) analyze(ctx context.Context, in AnalysisInput, rules []capstan.FailureRule) (capstan.Analysis, error) {
	for _, r := range in.Runs {
		if r.NodeID == in.Node || r.Error == "" && r.Status != capstan.NodeFailed {
			continue
		}
		if a, ok := MatchRules(rules, r.NodeID, in.Runs, in.Evidence); ok {
			return a, nil
		}
	}
	return l.e.cfg.Analyzer.Analyze(ctx, in)
}

// analysisInput gathers what the analyzer sees, from the store.
func (l *loop) analysisInput(ctx context.Context, n *capstan.PlanNode, resource string, plan *capstan.Plan, packs []*capstan.ScenarioPack) (AnalysisInput, error) {
	red := l.redactor()
	in := AnalysisInput{Org: l.org, OperationID: l.opID, Node: n.ID, Plan: plan, Lookup: analysisLookup{l}, Redact: red.String}
	var wanted []string
	if n.Analysis != nil {
		in.Question, wanted = n.Analysis.Question, n.Analysis.Inputs
	}
	recs, err := l.e.cfg.Store.OperationRecords(ctx, l.org, l.opID)
	if err != nil {
		return in, err
	}
	in.Runs, in.Evidence = recs.NodeRuns, recs.Evidence
	for _, art := range recs.Artifacts {
		if !slices.Contains(wanted, art.Name) {
			continue
		}
		a := AnalysisArtifact{Artifact: art}
		if art.Sensitivity != capstan.SensitivitySecret { // a secret's value never reaches an analyzer
			content, err := artifact.Read(ctx, l.e.cfg.Artifacts, art, 0)
			if err != nil {
				return in, err
			}
			// Masked again as it is read: a value that became a secret
			// after the file was written is not shown either.
			// Masked whole before the tail is taken: a secret across the
			// cut would otherwise keep its end.
			masked := red.Bytes(content)
			a.Content = masked[max(0, len(masked)-maxAnalysisContent):]
		}
		in.Artifacts = append(in.Artifacts, a)
	}
	if resource != "" {
		res, err := l.e.cfg.Prober.Resources.GetResourceByKey(ctx, l.org, resource)
		if err != nil && capstan.ErrorCode(err) != capstan.ENOTFOUND {
			return in, err
		}
		in.Resource = res
	}
	return in, l.analysisContext(ctx, &in, plan, packs)
}

// analysisContext adds the templates the packs publish and the catalog
// facts of the plan's bound providers.
func (l *loop) analysisContext(ctx context.Context, in *AnalysisInput, plan *capstan.Plan, packs []*capstan.ScenarioPack) error {
	for _, p := range capstan.NewestPacks(packs) {
		in.Templates = append(in.Templates, p.NodeTemplates...)
	}
	if plan == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, b := range plan.Bindings {
		if b.Provider == nil || seen[b.Provider.ResourceKey] || len(in.Resources) >= maxAnalysisResources {
			continue
		}
		seen[b.Provider.ResourceKey] = true
		res, err := l.e.cfg.Prober.Resources.GetResourceByKey(ctx, l.org, b.Provider.ResourceKey)
		if err != nil && capstan.ErrorCode(err) != capstan.ENOTFOUND {
			return err
		}
		if res != nil {
			in.Resources = append(in.Resources, res)
		}
	}
	return nil
}

// maxAnalysisResources bounds the resources an analysis is shown.
const maxAnalysisResources = 50

// analysisLookup answers an analyzer's read-only tools for a loop.
type analysisLookup struct{ l *loop }

// NodeOutput is the masked tail of the non-secret artifacts the node wrote.
func (a analysisLookup) NodeOutput(ctx context.Context, node string) (string, error) {
	recs, err := a.l.e.cfg.Store.OperationRecords(ctx, a.l.org, a.l.opID)
	if err != nil {
		return "", err
	}
	var out []byte
	for _, art := range recs.Artifacts {
		if art.ProducedBy != node || art.Sensitivity == capstan.SensitivitySecret {
			continue
		}
		content, err := artifact.Read(ctx, a.l.e.cfg.Artifacts, art, 0)
		if err != nil {
			continue
		}
		masked := a.l.redactor().Bytes(content) // whole, then the tail: see analysisInput
		out = append(out, masked[max(0, len(masked)-maxToolOutput):]...)
	}
	return string(out[max(0, len(out)-maxToolOutput):]), nil
}

// maxToolOutput bounds a node's output read through a tool.
const maxToolOutput = 8 << 10

// Resource is a catalog resource of the loop's organization.
func (a analysisLookup) Resource(ctx context.Context, key string) (*capstan.Resource, error) {
	return a.l.e.cfg.Prober.Resources.GetResourceByKey(ctx, a.l.org, key)
}
