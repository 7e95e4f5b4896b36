package modelanalyzer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
)

// maxResponse bounds an HTTP response from the model's server, and
// maxAnswer the answer inside it: a server that streams gigabytes costs
// this much memory, no more.
const (
	maxResponse = 1 << 20
	maxAnswer   = 64 << 10
)

var errBodyTooLarge = errors.New("response body too large")

// limitBody is a transport whose response bodies fail past maxResponse.
type limitBody struct{ next http.RoundTripper }

func (l limitBody) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err == nil {
		resp.Body = &limitedBody{rc: resp.Body, left: maxResponse}
	}
	return resp, err
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// decodeAnswer reads the model's final message: complete, not refused,
// within maxAnswer, and exactly the schema's shape (strict mode is the
// server's promise; this is ours).
func decodeAnswer(finish, refusal, content string) (*Answer, error) {
	switch {
	case refusal != "":
		return nil, invalid("the model refused: %.200s", refusal)
	case finish == "length":
		return nil, invalid("the answer was cut at the token limit")
	case len(content) > maxAnswer:
		return nil, invalid("the answer is larger than %d bytes", maxAnswer)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(content)))
	dec.DisallowUnknownFields()
	var a Answer
	if err := dec.Decode(&a); err != nil {
		return nil, invalid("not the analysis schema: %v", err)
	}
	if dec.More() {
		return nil, invalid("not the analysis schema: more than one JSON value")
	}
	var p capstan.Problems
	if !slices.Contains(capstan.AnalysisKinds, capstan.AnalysisKind(a.Kind)) {
		p.Addf("kind %q is not one of diagnosis, recommendation, patch, review", a.Kind)
	}
	for i, f := range a.Findings {
		for _, c := range f.Citations {
			if err := checkCitationKind(c.Kind); err != nil {
				p.Addf("finding %d: %v", i+1, err)
			}
		}
	}
	if err := p.Err("model answer rejected: not the analysis schema"); err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "%s", capstan.ErrorMessage(err))
	}
	return &a, nil
}

// analysisOf turns a checked answer into the analysis: findings whose
// citations do not all name a record of the operation are dropped and
// counted; a change may only name a template the packs publish.
func analysisOf(ans *Answer, in executor.AnalysisInput, rec *capstan.AnalysisModel) (capstan.Analysis, error) {
	a := capstan.Analysis{Analyzer: Name, Kind: capstan.AnalysisKind(ans.Kind), Diagnosis: ans.Diagnosis,
		Recommendation: ans.Recommendation, Missing: ans.Missing, Model: rec}
	known := citable(in)
	for _, f := range ans.Findings {
		ok := len(f.Citations) > 0
		var cites []capstan.AnalysisCitation
		for _, c := range f.Citations {
			ok = ok && known[c.Kind+":"+c.ID]
			cites = append(cites, capstan.AnalysisCitation{Kind: c.Kind, ID: c.ID})
		}
		if !ok {
			a.DroppedFindings++
			continue
		}
		af := capstan.AnalysisFinding{Source: "model", Detail: f.Detail, Citations: cites}
		for _, c := range cites {
			if c.Kind == "node" && af.Node == "" {
				af.Node = c.ID
			}
		}
		a.Findings = append(a.Findings, af)
	}
	changes, err := ans.planChanges()
	if err != nil {
		return capstan.Analysis{}, capstan.Errorf(capstan.EINVALID, "%s", capstan.ErrorMessage(err))
	}
	templates := map[string]bool{}
	for _, t := range in.Templates {
		templates[t.Name] = true
	}
	for i, c := range changes {
		if c.Template != "" && !templates[c.Template] {
			return capstan.Analysis{}, invalid("change %d: no installed pack publishes a template %q", i+1, c.Template)
		}
	}
	a.ProposedPatch = changes
	return a, nil
}

// citable lists what a finding may cite: the operation's evidence, the
// plan's nodes (or the nodes that ran) and the resources it was shown.
func citable(in executor.AnalysisInput) map[string]bool {
	known := map[string]bool{}
	for _, e := range in.Evidence {
		known["evidence:"+e.ID] = true
	}
	for _, r := range in.Runs {
		known["node:"+r.NodeID] = true
	}
	if in.Plan != nil {
		for _, n := range in.Plan.Nodes {
			known["node:"+n.ID] = true
		}
	}
	for _, r := range in.Resources {
		known["resource:"+r.Key()] = true
	}
	if in.Resource != nil {
		known["resource:"+in.Resource.Key()] = true
	}
	return known
}

// toolError is a tool's refusal as the model reads it.
func toolError(format string, args ...any) string {
	return fmt.Sprintf(`{"error": %q}`, fmt.Sprintf(format, args...))
}
