package executor

import (
	"context"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
	"github.com/capstan-dev/capstan/internal/guard"
)

// A job whose contract allows AI assistance and that failed past its
// retries is analyzed without anyone asking: the packs' known-failure
// rules first (ai-agent:rules), the configured analyzer otherwise. A
// proposed change goes to the service as a PlanPatch authored by the
// analyzer (Hooks.ProposeFromAnalysis), which judges it like any other
// and never applies it without a person's approval.

// assistance is what the loop hands on after a commit: a failed node to
// analyze, or (analysis set) an ai_analysis node's accepted patch
// analysis to propose.
type assistance struct {
	node     string
	analysis *capstan.Analysis
	evidence []string
}

// proposeFrom queues the proposal of an ai_analysis node whose accepted
// output is a patch: like any analyzer's, it becomes a PlanPatch a person
// approves.
func (l *loop) proposeFrom(n *capstan.PlanNode, evidence []capstan.Evidence) {
	if n.Type != capstan.NodeAIAnalysis {
		return
	}
	for _, e := range evidence {
		if a, ok := capstan.AnalysisOf(e); ok && e.Result == capstan.EvidencePassed && a.Kind == capstan.AnalysisPatch {
			l.assist = append(l.assist, assistance{node: n.ID, analysis: &a})
		}
	}
}

// wantsAssist reports whether a node's failure is analyzed by itself.
func wantsAssist(n *capstan.PlanNode) bool {
	return n.Job != nil && n.Job.Controls.AIAssistanceAllowed
}

// startAssists analyzes the nodes whose failure the last commit recorded,
// each in a goroutine the loop waits for before it ends.
func (l *loop) startAssists(plan *capstan.Plan) {
	todo := l.assist
	l.assist = nil
	if l.e.cfg.Hooks == nil {
		return
	}
	for _, as := range todo {
		l.assists.Add(1)
		go func() {
			defer l.assists.Done()
			defer guard.Recover(l.e.cfg.Log, "executor.assist", nil)
			var err error
			if as.analysis != nil {
				err = l.e.cfg.Hooks.ProposeFromAnalysis(l.life, l.org, l.opID, plan.Revision, as.node, *as.analysis, nil)
			} else {
				err = l.analyzeFailure(l.life, as.node, plan)
			}
			if err != nil && l.life.Err() == nil {
				l.e.cfg.Log.Warn("an analysis's proposal failed", "operation", l.opID, "node", as.node, "err", err.Error())
			}
		}()
	}
}

// analyzeFailure analyzes one failed node and hands a proposal on.
func (l *loop) analyzeFailure(ctx context.Context, node string, plan *capstan.Plan) error {
	store := l.e.cfg.Store
	recs, err := store.OperationRecords(ctx, l.org, l.opID)
	if err != nil {
		return err
	}
	packs, err := store.ListPacks(ctx, l.org)
	if err != nil {
		return err
	}
	a, ok := analysis.MatchRules(analysis.FailureRules(packs), node, recs.NodeRuns, recs.Evidence)
	if !ok || l.e.cfg.SkipRules {
		in := analysis.Input{Org: l.org, OperationID: l.opID, Question: "why did " + node + " fail, and what would fix it?", Runs: recs.NodeRuns,
			Evidence: recs.Evidence, Plan: plan, Lookup: analysisLookup{l}, Redact: l.redactor().String}
		if err := l.analysisContext(ctx, &in, plan, packs); err != nil {
			return err
		}
		if a, err = l.e.cfg.Analyzer.Analyze(ctx, in); err != nil {
			return l.analysisFailed(ctx, node, analysis.Name(l.e.cfg.Analyzer), err)
		}
	}
	if err := a.Check(func(id string) bool { return plan.Node(id) != nil }); err != nil {
		return l.analysisFailed(ctx, node, agentName(a.Analyzer, l.e.cfg.Analyzer), err)
	}
	if a.Kind != capstan.AnalysisPatch {
		return nil // a diagnosis alone changes nothing; people see the failure
	}
	var cited []string
	for _, e := range recs.Evidence {
		if e.ProducedBy == node && e.Result != capstan.EvidencePassed {
			cited = append(cited, e.ID)
		}
	}
	return l.e.cfg.Hooks.ProposeFromAnalysis(ctx, l.org, l.opID, plan.Revision, node, a, cited)
}

// recheckPatches asks for the operation's proposals to be judged again
// now that nodes moved: one whose node started or finished becomes stale
// at once, not only when someone tries to approve it. The loop does it
// itself at its next turn (recheckNow): a recheck is the owner's own
// write, recorded as no command.
func (l *loop) recheckPatches() {
	if l.e.cfg.Hooks != nil {
		l.recheck = true
	}
}

// recheckNow judges the proposals again through the service's rules and
// commits the patches found stale, under the loop's fence. A patch that
// cannot be judged now is logged; the next recheck judges it.
func (l *loop) recheckNow(ctx context.Context) error {
	l.recheck = false
	ch, _, err := l.e.cfg.Hooks.DecideCommand(ctx, l.org, l.opID, capstan.Command{Kind: capstan.CommandRecheckPatches,
		Actor: capstan.Actor{ID: "capstan", OrganizationID: l.org}, At: *l.now()})
	if err != nil {
		l.e.cfg.Log.Warn("rechecking proposed patches failed", "operation", l.opID, "err", err.Error())
	}
	if ch == nil {
		return nil
	}
	l.dirty = true
	ch.Fence = l.fence
	return l.e.cfg.Store.ApplyOperationChange(ctx, l.org, ch)
}

// analysisFailed puts why an analysis gave nothing to propose on the
// timeline, not only in the server's log; it is logged as well.
func (l *loop) analysisFailed(ctx context.Context, node, analyzer string, reason error) error {
	l.e.cfg.Log.Warn("an analysis gave nothing to propose", "operation", l.opID, "node", node, "analyzer", analyzer, "err", reason.Error())
	if ctx.Err() != nil {
		return nil
	}
	return l.e.cfg.Hooks.AnalysisFailed(ctx, l.org, l.opID, node, analyzer, reason)
}

// agentName is the actor an analysis's answer speaks as: its analyzer
// with the agent prefix (never what looks like a person), or the
// configured analyzer's name when the answer names none.
func agentName(name string, configured analysis.Analyzer) string {
	switch {
	case name == "":
		return analysis.Name(configured)
	case capstan.IsAgent(name):
		return name
	}
	return capstan.AgentPrefix + name
}
