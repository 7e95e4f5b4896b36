package analysis

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/capstan-dev/capstan"
)

// RuleAnalyzerName names the analyzer of the packs' known-failure rules.
const RuleAnalyzerName = capstan.AgentPrefix + "rules"

// MatchRules is the rule analyzer's pure decision: the first rule (in the
// order given) whose node failed with its evidence item failed, or with
// an error matching its pattern, gives the diagnosis, the missing
// capability (on the resource the failed evidence looked at) and the
// patch. ok is false when no rule matches.
func MatchRules(rules []capstan.FailureRule, node string, runs []capstan.OperationNodeRun, evidence []capstan.Evidence) (capstan.Analysis, bool) {
	i := slices.IndexFunc(runs, func(r capstan.OperationNodeRun) bool { return r.NodeID == node })
	if i < 0 {
		return capstan.Analysis{}, false
	}
	run := runs[i]
	for _, rule := range rules {
		if rule.Node != node {
			continue
		}
		var cited []capstan.Evidence
		for _, e := range evidence {
			if e.ProducedBy == node && e.Result == capstan.EvidenceFailed && (rule.Evidence == "" || e.Item == rule.Evidence) {
				cited = append(cited, e)
			}
		}
		matched := rule.Evidence != "" && len(cited) > 0
		if rule.Error != "" {
			re, err := regexp.Compile(rule.Error)
			matched = err == nil && re.MatchString(run.Error) && (rule.Evidence == "" || matched)
		}
		if !matched {
			continue
		}
		return ruleAnalysis(rule, node, run, cited), true
	}
	return capstan.Analysis{}, false
}

func ruleAnalysis(rule capstan.FailureRule, node string, run capstan.OperationNodeRun, cited []capstan.Evidence) capstan.Analysis {
	a := capstan.Analysis{Analyzer: RuleAnalyzerName, Kind: capstan.AnalysisDiagnosis, Diagnosis: rule.Diagnosis,
		Recommendation: "known failure " + rule.ID + " (" + rule.Pack + ")"}
	var where []string
	for _, e := range cited {
		res, _ := e.Source["resource"].(string)
		if res != "" && !slices.Contains(where, res) {
			where = append(where, res)
		}
		a.Findings = append(a.Findings, capstan.AnalysisFinding{Node: node, Source: "evidence " + e.Item, Detail: fmt.Sprintf("%s %s", e.Item, e.Result), Ref: e.ID})
	}
	if run.Error != "" {
		a.Findings = append(a.Findings, capstan.AnalysisFinding{Node: node, Source: "node run", Detail: run.Error})
	}
	if rule.MissingCapability != "" {
		missing := rule.MissingCapability
		if len(where) > 0 {
			missing += " on " + strings.Join(where, ", ")
		}
		a.Missing = []string{missing}
	}
	if len(rule.Patch) > 0 {
		a.Kind = capstan.AnalysisPatch
		a.ProposedPatch = make([]capstan.PlanChange, len(rule.Patch))
		for i, c := range rule.Patch {
			if strings.TrimSpace(c.Reason) == "" {
				c.Reason = rule.Diagnosis
			}
			a.ProposedPatch[i] = c
		}
		a.Recommendation = "apply the proposed patch: " + changeList(rule.Patch)
	}
	return a
}

func changeList(cs []capstan.PlanChange) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return strings.Join(out, "; ")
}

// FailureRules gathers the rules of the newest version of each installed
// pack, each with its pack's ref.
func FailureRules(packs []*capstan.ScenarioPack) []capstan.FailureRule {
	var out []capstan.FailureRule
	for _, p := range capstan.NewestPacks(packs) {
		for _, r := range p.FailureRules {
			r.Pack = p.Ref()
			out = append(out, r)
		}
	}
	return out
}
