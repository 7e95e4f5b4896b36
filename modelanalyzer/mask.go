package modelanalyzer

import (
	"fmt"
	"regexp"
	"strings"
)

// Masking, k8sgpt's way: names the organization marks sensitive (host
// names, addresses, customer names: Config.Mask) leave the server as
// stable placeholders (MASK_1, MASK_2 …, the same name the same
// placeholder within one analysis) and come back in the answer, so the
// model can still reason about "the same host" and cite it.

// defaultMask is masked whatever the configuration says: IPv4 addresses.
var defaultMask = []*regexp.Regexp{regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}\b`)}

// masker masks and restores the names of one analysis.
type masker struct {
	patterns []*regexp.Regexp
	byName   map[string]string
	byToken  map[string]string
}

func newMasker(patterns []*regexp.Regexp) *masker {
	return &masker{patterns: append(append([]*regexp.Regexp{}, defaultMask...), patterns...),
		byName: map[string]string{}, byToken: map[string]string{}}
}

// mask replaces every sensitive name in s with its placeholder.
func (m *masker) mask(s string) string {
	for _, p := range m.patterns {
		s = p.ReplaceAllStringFunc(s, func(name string) string {
			if strings.HasPrefix(name, "MASK_") {
				return name
			}
			tok, ok := m.byName[name]
			if !ok {
				tok = fmt.Sprintf("MASK_%d", len(m.byName)+1)
				m.byName[name], m.byToken[tok] = tok, name
			}
			return tok
		})
	}
	return s
}

// placeholder matches a placeholder whole: MASK_99 is not MASK_9 and a 9.
var placeholder = regexp.MustCompile(`MASK_\d+`)

// unmask puts the names back in s; an unknown placeholder stays.
func (m *masker) unmask(s string) string {
	if len(m.byToken) == 0 {
		return s
	}
	return placeholder.ReplaceAllStringFunc(s, func(tok string) string {
		if name, ok := m.byToken[tok]; ok {
			return name
		}
		return tok
	})
}

// unmaskAnswer restores every string of an answer.
func (m *masker) unmaskAnswer(a *Answer) {
	a.Diagnosis, a.Recommendation = m.unmask(a.Diagnosis), m.unmask(a.Recommendation)
	for i := range a.Findings {
		f := &a.Findings[i]
		f.Detail = m.unmask(f.Detail)
		for j := range f.Citations {
			f.Citations[j].ID = m.unmask(f.Citations[j].ID)
		}
	}
	for i := range a.ProposedPatch {
		c := &a.ProposedPatch[i]
		for _, s := range []*string{&c.Node, &c.Template, &c.NodeID, &c.Requirement, &c.Provider, &c.Reason, &c.Edge.From, &c.Edge.To} {
			*s = m.unmask(*s)
		}
		for j := range c.Parameters {
			c.Parameters[j].Value = m.unmask(c.Parameters[j].Value)
		}
	}
	for i := range a.Missing {
		a.Missing[i] = m.unmask(a.Missing[i])
	}
}
