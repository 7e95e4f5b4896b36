package modelanalyzer

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// Masking, k8sgpt's way: names the organization marks sensitive (host
// names, addresses, customer names: Config.Mask) leave the server as
// placeholders and come back in the answer, so the model can still reason
// about "the same host" and cite it. The masking runs on each string
// value before anything is encoded as JSON (scrub.go): patterns never see
// escapes or JSON syntax.
//
// A placeholder is MASK_<nonce>_<n>: the nonce is drawn for each analysis,
// so a log line that already holds something like a placeholder is never
// restored into a name, and all patterns match in one pass (one
// alternation), so a placeholder is never masked again inside another.

// ipv4 finds candidate IPv4 addresses (and AWS-style host names that spell
// one: ip-10-0-3-7); ipv4Bounded keeps those that stand alone: not inside
// a longer run of numbers and dots (a version 1.2.3.4.5 is no address),
// also where a full stop ends the sentence or the name (10.20.30.41.).
// One pass, linear in the text.
var ipv4 = regexp.MustCompile(`\d{1,3}(?:\.\d{1,3}){3}|ip-\d{1,3}(?:-\d{1,3}){3}`)

func ipv4Bounded(s string, start, end int) bool {
	digit := func(i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }
	if strings.HasPrefix(s[start:end], "ip-") {
		return !digit(end) && !(end < len(s) && s[end] == '-' && digit(end+1))
	}
	if digit(start-1) || start > 0 && s[start-1] == '.' && digit(start-2) {
		return false
	}
	return !digit(end) && !(end < len(s) && s[end] == '.' && digit(end+1))
}

// masker masks and restores the names of one analysis.
type masker struct {
	pattern     *regexp.Regexp // every configured pattern, one alternation; nil: none
	nonce       string
	placeholder *regexp.Regexp
	byName      map[string]string
	byToken     map[string]string
}

func newMasker(patterns []*regexp.Regexp) *masker {
	b := make([]byte, 3)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	nonce := strings.ToUpper(hex.EncodeToString(b))
	m := &masker{nonce: nonce, placeholder: regexp.MustCompile(`MASK_` + nonce + `_\d+`),
		byName: map[string]string{}, byToken: map[string]string{}}
	if len(patterns) > 0 {
		parts := make([]string, len(patterns))
		for i, p := range patterns {
			parts[i] = "(?:" + p.String() + ")"
		}
		m.pattern = regexp.MustCompile(strings.Join(parts, "|")) // each compiled alone already
	}
	return m
}

// token is name's placeholder.
func (m *masker) token(name string) string {
	tok, ok := m.byName[name]
	if !ok {
		tok = fmt.Sprintf("MASK_%s_%d", m.nonce, len(m.byName)+1)
		m.byName[name], m.byToken[tok] = tok, name
	}
	return tok
}

// mask replaces every sensitive name in s with its placeholder.
func (m *masker) mask(s string) string {
	if m.pattern != nil {
		s = m.pattern.ReplaceAllStringFunc(s, func(name string) string {
			if m.placeholder.MatchString(name) {
				return name
			}
			return m.token(name)
		})
	}
	// IPv4 addresses, whatever the configuration says.
	var b strings.Builder
	last := 0
	for _, loc := range ipv4.FindAllStringIndex(s, -1) {
		if !ipv4Bounded(s, loc[0], loc[1]) || m.placeholder.MatchString(s[loc[0]:loc[1]]) {
			continue
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(m.token(s[loc[0]:loc[1]]))
		last = loc[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// changes reports whether masking would change s: s holds a sensitive
// name in the clear.
func (m *masker) changes(s string) bool { return m.mask(s) != s }

// unmask puts the names back in s; an unknown placeholder stays.
func (m *masker) unmask(s string) string {
	if len(m.byToken) == 0 {
		return s
	}
	return m.placeholder.ReplaceAllStringFunc(s, func(tok string) string {
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
