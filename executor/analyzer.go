package executor

import (
	"context"
	"fmt"
	"slices"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
	"github.com/capstan-dev/capstan/artifact"
	"github.com/capstan-dev/capstan/executor/job"
)

// analysis runs the analyzer on a worker and records its checked output
// as the node's evidence: passed when the output is structured as
// invariant 9 asks, failed (with why) when it is not. An analyzer error is
// an attempt error, retried as the node's policy says.
func (l *loop) analysis(ctx context.Context, n *capstan.PlanNode, r nodeResult, scope attemptScope) nodeResult {
	packs, err := l.e.cfg.Store.ListPacks(ctx, l.org)
	var in analysis.Input
	if err == nil {
		in, err = l.analysisInput(ctx, n, scope.resource, scope.plan, packs)
	}
	if err != nil {
		r.res = job.Result{ExitCode: -1, ErrKind: "analyzer", Err: fmt.Errorf("analysis input: %w", err)}
		return r
	}
	var rules []capstan.FailureRule // none when the node asks for the model
	if !l.e.cfg.SkipRules && (n.Analysis == nil || !n.Analysis.Model) {
		rules = analysis.FailureRules(packs)
	}
	a, err := l.analyze(ctx, in, rules)
	if err != nil {
		r.res = job.Result{ExitCode: -1, ErrKind: "analyzer", Err: fmt.Errorf("analyzer: %w", err)}
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
func (l *loop) analyze(ctx context.Context, in analysis.Input, rules []capstan.FailureRule) (capstan.Analysis, error) {
	for _, r := range in.Runs {
		if r.NodeID == in.Node || r.Error == "" && r.Status != capstan.NodeFailed {
			continue
		}
		if a, ok := analysis.MatchRules(rules, r.NodeID, in.Runs, in.Evidence); ok {
			return a, nil
		}
	}
	return l.e.cfg.Analyzer.Analyze(ctx, in)
}

// analysisInput gathers what the analyzer sees, from the store.
func (l *loop) analysisInput(ctx context.Context, n *capstan.PlanNode, resource string, plan *capstan.Plan, packs []*capstan.ScenarioPack) (analysis.Input, error) {
	red := l.redactor()
	in := analysis.Input{Org: l.org, OperationID: l.opID, Node: n.ID, Plan: plan, Lookup: analysisLookup{l}, Redact: red.String}
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
		a := analysis.Artifact{Artifact: art}
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
			a.Content = masked[max(0, len(masked)-analysis.MaxContent):]
		}
		in.Artifacts = append(in.Artifacts, a)
	}
	if resource != "" {
		res, err := l.e.cfg.Store.GetResourceByKey(ctx, l.org, resource)
		if err != nil && capstan.ErrorCode(err) != capstan.ENOTFOUND {
			return in, err
		}
		in.Resource = res
	}
	return in, l.analysisContext(ctx, &in, plan, packs)
}

// analysisContext adds the templates the packs publish and the catalog
// facts of the plan's bound providers.
func (l *loop) analysisContext(ctx context.Context, in *analysis.Input, plan *capstan.Plan, packs []*capstan.ScenarioPack) error {
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
		res, err := l.e.cfg.Store.GetResourceByKey(ctx, l.org, b.Provider.ResourceKey)
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
	return a.l.e.cfg.Store.GetResourceByKey(ctx, a.l.org, key)
}
