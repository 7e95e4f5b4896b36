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
		var captured map[string]string
		if rule.Error != "" {
			re, err := regexp.Compile(rule.Error)
			m := []string(nil)
			if err == nil {
				m = re.FindStringSubmatch(run.Error)
			}
			matched = m != nil && (rule.Evidence == "" || matched)
			captured = captures(re, m)
		}
		if !matched {
			continue
		}
		return ruleAnalysis(withCaptures(rule, captured), node, run, cited), true
	}
	return capstan.Analysis{}, false
}

// captures are the named groups of a match (node: worker-3).
func captures(re *regexp.Regexp, m []string) map[string]string {
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for i, name := range re.SubexpNames() {
		if name != "" && i < len(m) {
			out[name] = m[i]
		}
	}
	return out
}

// withCaptures is the rule with ${match.NAME} in its diagnosis and patch (reasons, string parameters) replaced by what
// the error's named group NAME matched: the node whose pods cannot pull,
// read from the failure itself. Values only: a change's op, node and
// template stay as the pack wrote them.
func withCaptures(rule capstan.FailureRule, captured map[string]string) capstan.FailureRule {
	fill := func(s string) string {
		return capstan.MatchRef.ReplaceAllStringFunc(s, func(ref string) string { return captured[capstan.MatchRef.FindStringSubmatch(ref)[1]] })
	}
	rule.Diagnosis = fill(rule.Diagnosis)
	rule.Patch = slices.Clone(rule.Patch)
	for i, c := range rule.Patch {
		c.Reason = fill(c.Reason)
		if c.Parameters != nil {
			params := make(map[string]any, len(c.Parameters))
			for k, v := range c.Parameters {
				if s, ok := v.(string); ok {
					v = fill(s)
				}
				params[k] = v
			}
			c.Parameters = params
		}
		rule.Patch[i] = c
	}
	return rule
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
