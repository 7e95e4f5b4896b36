package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
)

// Mask replaces a secret value (or any encoding of it) in an output.
const Mask = "[redacted]"

// Redactor masks secret values in outputs: each value as it is and in
// the encodings an output commonly carries it — base64 (standard and URL
// alphabets, at any alignment inside a longer encoded text), URL escaping
// (query and path), JSON string escaping, hex. It is immutable.
type Redactor struct {
	patterns [][]byte // longest first, so a longer encoding is masked whole
	// all withholds everything (Withhold): the values to mask could not
	// be loaded.
	all bool
}

// Withhold is the redactor of an organization whose secret values could
// not be loaded: it masks every output whole rather than none of it
// (fail closed).
func Withhold() *Redactor { return &Redactor{all: true} }

// NewRedactor builds a redactor for values (shorter than MinValueLen
// ones are ignored).
func NewRedactor(values [][]byte) *Redactor {
	seen := map[string]bool{}
	var patterns [][]byte
	add := func(p []byte) {
		if len(p) >= MinValueLen/2 && !seen[string(p)] {
			seen[string(p)] = true
			patterns = append(patterns, p)
		}
	}
	for _, v := range values {
		v = bytes.TrimSpace(v)
		if len(v) < MinValueLen {
			continue
		}
		for _, e := range encodings(v) {
			add(e)
		}
	}
	sort.Slice(patterns, func(i, j int) bool { return len(patterns[i]) > len(patterns[j]) })
	return &Redactor{patterns: patterns}
}

func encodings(v []byte) [][]byte {
	s := string(v)
	out := [][]byte{v, []byte(url.QueryEscape(s)), []byte(url.PathEscape(s)), []byte(hex.EncodeToString(v)),
		[]byte(strings.ToUpper(hex.EncodeToString(v)))}
	if j, err := json.Marshal(s); err == nil {
		out = append(out, j[1:len(j)-1])
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, base64Cores(enc, v)...)
	}
	return out
}

// base64Cores are the characters of v's base64 encoding that depend on
// v's bytes alone, for each of the three alignments v can have inside a
// longer encoded text.
func base64Cores(enc *base64.Encoding, v []byte) [][]byte {
	var out [][]byte
	for k := 0; k < 3; k++ {
		padded := append(make([]byte, k), v...)
		full := enc.EncodeToString(padded)
		start := (k*8 + 5) / 6
		end := (k + len(v)) * 8 / 6
		if end > start {
			out = append(out, []byte(full[start:end]))
		}
	}
	return out
}

// Empty reports whether there is nothing to mask.
func (r *Redactor) Empty() bool { return r == nil || (len(r.patterns) == 0 && !r.all) }

// Bytes masks b (b itself is never changed).
func (r *Redactor) Bytes(b []byte) []byte {
	if r.Empty() {
		return b
	}
	if r.all {
		return []byte(Mask)
	}
	return []byte(r.String(string(b)))
}

// String masks s.
func (r *Redactor) String(s string) string {
	if r.Empty() {
		return s
	}
	if r.all {
		return Mask
	}
	s = r.wrapped(s)
	for _, p := range r.patterns {
		if strings.Contains(s, string(p)) {
			s = strings.ReplaceAll(s, string(p), Mask)
		}
	}
	return s
}

// wrapped masks base64 that an encoder wrapped over lines (base64(1)'s
// 76 columns, PEM's 64, MIME's 76 with CRLF, indented in YAML): a run of
// two or more lines of base64 characters alone, every line but the last
// of one width (at least 16) and the last no wider, padding only at its
// end — the shape an encoder leaves, not that of a few words — is read
// joined, and masked whole, every line of it, when the joined text holds
// a secret's encoding.
func (r *Redactor) wrapped(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(lines); {
		n := wrappedRun(lines[i:])
		if n < 2 {
			b.WriteString(lines[i])
			i++
			continue
		}
		var joined strings.Builder
		for _, l := range lines[i : i+n] {
			joined.WriteString(strings.TrimSpace(l))
		}
		masked := r.holdsPattern(joined.String())
		for _, l := range lines[i : i+n] {
			if !masked {
				b.WriteString(l)
				continue
			}
			b.WriteString(Mask)
			if strings.HasSuffix(l, "\n") {
				b.WriteString("\n")
			}
		}
		i += n
	}
	return b.String()
}

// wrappedRun is how many of lines, from the first, are one block of
// wrapped base64 (0 or 1: none).
func wrappedRun(lines []string) int {
	width := 0
	for n, l := range lines {
		t := strings.TrimSpace(l)
		body := strings.TrimRight(t, "=")
		if len(t)-len(body) > 2 || !base64Chars(body) || len(t) == 0 {
			return n
		}
		switch {
		case n == 0:
			width = len(t)
			if width < 16 || len(body) != len(t) && len(lines) > 1 {
				return 0 // padding ends a block: a first line with it is a block of one
			}
		case len(t) > width:
			return n
		case len(t) < width || len(body) != len(t):
			return n + 1 // the last line: narrower, or padded
		}
	}
	return len(lines)
}

// base64Chars reports text of base64 characters alone (either alphabet).
func base64Chars(t string) bool {
	for _, c := range t {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

func (r *Redactor) holdsPattern(s string) bool {
	for _, p := range r.patterns {
		if strings.Contains(s, string(p)) {
			return true
		}
	}
	return false
}

// Value masks every string inside a JSON-like value (maps, slices,
// strings), keys included, returning a new value when anything changed.
func (r *Redactor) Value(v any) any {
	if r.Empty() {
		return v
	}
	switch v := v.(type) {
	case string:
		return r.String(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[r.String(k)] = r.Value(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = r.Value(x)
		}
		return out
	case []string:
		out := make([]string, len(v))
		for i, x := range v {
			out[i] = r.String(x)
		}
		return out
	}
	return v
}

// Map masks a map[string]any.
func (r *Redactor) Map(m map[string]any) map[string]any {
	if m == nil || r.Empty() {
		return m
	}
	return r.Value(m).(map[string]any)
}

// Holds reports whether any string inside a JSON-like value (maps,
// slices, strings, keys included) holds a secret value: what must be
// refused where a value would be stored and shown, rather than masked
// and then used.
func (r *Redactor) Holds(v any) bool {
	if r.Empty() {
		return false
	}
	switch v := v.(type) {
	case string:
		return r.String(v) != v
	case map[string]any:
		for k, x := range v {
			if r.Holds(k) || r.Holds(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if r.Holds(x) {
				return true
			}
		}
	case []string:
		for _, x := range v {
			if r.Holds(x) {
				return true
			}
		}
	}
	return false
}
