package capstan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// AnalysisKind says what an analysis delivers (invariant 9: an AI
// intervention produces a diagnosis, a PlanPatch, a recommendation or a
// review — never free text that changes state).
type AnalysisKind string

const (
	AnalysisDiagnosis      AnalysisKind = "diagnosis"
	AnalysisRecommendation AnalysisKind = "recommendation"
	AnalysisPatch          AnalysisKind = "patch"
	AnalysisReview         AnalysisKind = "review"
)

// AnalysisKinds lists every kind.
var AnalysisKinds = []AnalysisKind{AnalysisDiagnosis, AnalysisRecommendation, AnalysisPatch, AnalysisReview}

// Analysis is the structured output of an ai_analysis node. It changes
// nothing by itself: it is recorded as the node's evidence, and a proposed
// patch is only a proposal a person may apply as a PlanPatch.
type Analysis struct {
	Analyzer       string            `json:"analyzer"`
	Kind           AnalysisKind      `json:"kind"`
	Diagnosis      string            `json:"diagnosis"`
	Recommendation string            `json:"recommendation"`
	Findings       []AnalysisFinding `json:"findings,omitempty"`
	ProposedPatch  []PlanChange      `json:"proposed_patch,omitempty"`
	// Missing names capabilities the analysis found missing (network.registry_access on worker-3).
	Missing []string `json:"missing_capabilities,omitempty"`
	// DroppedFindings counts the findings a model returned that cited a
	// record the operation does not have: dropped, never shown as fact.
	DroppedFindings int `json:"dropped_findings,omitempty"`
	// Model is how a model answered (nil for the rule and deterministic
	// analyzers).
	Model *AnalysisModel `json:"model,omitempty"`
}

// AnalysisModel records a model's answer: which model, the digest of
// what it was sent (never the prompt itself), what it spent and the
// read-only tools it called.
type AnalysisModel struct {
	Name             string             `json:"name"`
	PromptDigest     string             `json:"prompt_digest"`
	PromptTokens     int64              `json:"prompt_tokens"`
	CompletionTokens int64              `json:"completion_tokens"`
	LatencyMS        int64              `json:"latency_ms"`
	Cost             float64            `json:"cost,omitempty"`
	ToolCalls        []AnalysisToolCall `json:"tool_calls,omitempty"`
}

// AnalysisToolCall is one read-only tool call a model made.
type AnalysisToolCall struct {
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	Error     string `json:"error,omitempty"`
}

// AnalysisCitation is a record a finding rests on: an evidence id, a node
// id or a resource key.
type AnalysisCitation struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// AnalysisFinding is one observation an analysis rests on, with where it
// was seen (a node, an evidence item, an artifact reference).
type AnalysisFinding struct {
	Node   string `json:"node,omitempty"`
	Source string `json:"source"`
	Detail string `json:"detail"`
	Ref    string `json:"ref,omitempty"`
	// Citations are the records a model's finding rests on, each checked
	// against the operation's records before the finding is kept.
	Citations []AnalysisCitation `json:"citations,omitempty"`
}

// Check rejects output that is not structured as invariant 9 asks: an
// unknown kind, no diagnosis or recommendation, a patch without changes
// (or changes in anything but a patch), a change with an unknown op or a
// node the plan does not have. hasNode reports the plan's nodes.
func (a Analysis) Check(hasNode func(string) bool) error {
	var p Problems
	if a.Analyzer == "" {
		p.Addf("the analyzer is not named")
	}
	if !slices.Contains(AnalysisKinds, a.Kind) {
		p.Addf("kind %q is not one of diagnosis, recommendation, patch, review", a.Kind)
	}
	if strings.TrimSpace(a.Diagnosis) == "" {
		p.Addf("no diagnosis")
	}
	if strings.TrimSpace(a.Recommendation) == "" {
		p.Addf("no recommendation")
	}
	switch {
	case a.Kind == AnalysisPatch && len(a.ProposedPatch) == 0:
		p.Addf("a patch analysis proposes no change")
	case a.Kind != AnalysisPatch && len(a.ProposedPatch) > 0:
		p.Addf("only a patch analysis may propose changes")
	}
	for i, c := range a.ProposedPatch {
		if !slices.Contains(ChangeOps, c.Op) {
			p.Addf("change %d: op %q is not a PlanPatch op", i+1, c.Op)
		}
		if c.Node != "" && !hasNode(c.Node) {
			p.Addf("change %d: the plan has no node %q", i+1, c.Node)
		}
		if strings.TrimSpace(c.Reason) == "" {
			p.Addf("change %d: no reason", i+1)
		}
	}
	return p.Err("analysis output rejected (invariant 9)")
}

// EvidenceSourceAnalysis is the evidence source type of an analysis.
const EvidenceSourceAnalysis = "analysis"

// Source returns the analysis as an evidence source.
func (a Analysis) Source(question string) map[string]any {
	var m map[string]any
	b, _ := json.Marshal(a) // plain strings and maps: cannot fail
	_ = json.Unmarshal(b, &m)
	m["type"] = EvidenceSourceAnalysis
	m["question"] = question
	return m
}

// AnalysisOf reads an analysis back from its evidence; ok is false for
// evidence of another source.
func AnalysisOf(e Evidence) (a Analysis, ok bool) {
	if e.Source["type"] != EvidenceSourceAnalysis {
		return a, false
	}
	b, err := json.Marshal(e.Source)
	if err != nil {
		return a, false
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return a, false
	}
	return a, true
}

// RecordedAnalysis is an accepted analysis with the node and question it
// answered.
type RecordedAnalysis struct {
	Analysis
	Node       string
	Question   string
	ObservedAt time.Time
}

// AnalysesOf returns the accepted analyses among an operation's evidence,
// in the order they were recorded.
func AnalysesOf(evidence []Evidence) []RecordedAnalysis {
	out := []RecordedAnalysis{}
	for _, e := range evidence {
		if a, ok := AnalysisOf(e); ok && e.Result == EvidencePassed {
			q, _ := e.Source["question"].(string)
			if a.Findings == nil {
				a.Findings = []AnalysisFinding{}
			}
			if a.ProposedPatch == nil {
				a.ProposedPatch = []PlanChange{}
			}
			out = append(out, RecordedAnalysis{Analysis: a, Node: e.ProducedBy, Question: q, ObservedAt: e.ObservedAt})
		}
	}
	return out
}

// String is a one-line summary for logs.
func (a Analysis) String() string {
	return fmt.Sprintf("%s by %s: %s", a.Kind, a.Analyzer, a.Diagnosis)
}
