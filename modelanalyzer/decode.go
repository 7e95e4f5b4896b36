package modelanalyzer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/analysis"
)

// maxResponse bounds an HTTP response from the model's server, and
// maxAnswer the answer inside it: a server that streams gigabytes costs
// this much memory, no more.
const (
	maxResponse = 1 << 20
	maxAnswer   = 64 << 10
)

var errBodyTooLarge = errors.New("response body too large")

// guardTransport sends only the headers a Chat Completions request needs
// (the SDK adds headers from OPENAI_* variables of the server's
// environment, which are not the endpoint's business) and fails a
// response body past maxResponse.
type guardTransport struct{ next http.RoundTripper }

// sentHeaders are the headers that reach the model's server.
var sentHeaders = []string{"Authorization", "Content-Type", "Content-Length", "Accept", "User-Agent", "Idempotency-Key"}

func (g guardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	kept := http.Header{}
	for _, h := range sentHeaders {
		if v := r.Header.Values(h); len(v) > 0 {
			kept[h] = v
		}
	}
	r.Header = kept
	resp, err := g.next.RoundTrip(r)
	if err == nil {
		resp.Body = &limitedBody{rc: resp.Body, left: maxResponse}
	}
	return resp, err
}

// unreachable reports a failure to reach the server (as opposed to an
// answer that is not what was asked).
func unreachable(err error) bool {
	var netErr net.Error
	var opErr *net.OpError
	var urlErr *url.Error
	return errors.As(err, &netErr) || errors.As(err, &opErr) || errors.As(err, &urlErr) || errors.Is(err, io.ErrUnexpectedEOF)
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
	if err := checkJSON(content); err != nil {
		return nil, invalid("not the analysis schema: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(content))
	if err != nil {
		return nil, invalid("not the analysis schema: %v", err)
	}
	if err := answerSchema.Validate(inst); err != nil {
		return nil, invalid("not the analysis schema: %s", truncate(err.Error(), 500))
	}
	var a Answer
	if err := json.Unmarshal([]byte(content), &a); err != nil {
		return nil, invalid("not the analysis schema: %v", err)
	}
	return &a, nil
}

// answerSchema is Schema compiled, to check answers with: strict mode is
// the server's promise, this is ours (every property, no other, the
// enums, the types).
var answerSchema = func() *jsonschema.Schema {
	c := jsonschema.NewCompiler()
	const url = "https://capstan.dev/schema/analysis-answer.json"
	if err := c.AddResource(url, Schema()); err != nil {
		panic("modelanalyzer: " + err.Error())
	}
	return c.MustCompile(url)
}()

// checkJSON refuses what a schema check of decoded JSON cannot see: a key
// twice in one object (the last would win), and anything after the value.
func checkJSON(content string) error {
	dec := json.NewDecoder(strings.NewReader(content))
	if err := checkValue(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

func checkValue(dec *json.Decoder, depth int) error {
	if depth > 32 {
		return errors.New("nested too deep")
	}
	t, err := dec.Token()
	if err != nil {
		return err
	}
	switch t {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			if seen[key] {
				return fmt.Errorf("key %q twice in one object", truncate(key, 64))
			}
			seen[key] = true
			if err := checkValue(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		for dec.More() {
			if err := checkValue(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// analysisOf turns a checked answer into the analysis: findings whose
// citations do not all name a record the model was shown (or read) are
// dropped and counted; a change may only name a template the packs
// publish.
func analysisOf(ans *Answer, s *session) (capstan.Analysis, error) {
	in := s.in
	a := capstan.Analysis{Analyzer: Name, Kind: capstan.AnalysisKind(ans.Kind), Diagnosis: ans.Diagnosis,
		Recommendation: ans.Recommendation, Missing: ans.Missing, Model: s.rec}
	known := s.known
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
func citable(in analysis.Input) map[string]bool {
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
		if r != nil {
			known["resource:"+r.Key()] = true
		}
	}
	if in.Resource != nil {
		known["resource:"+in.Resource.Key()] = true
	}
	return known
}
