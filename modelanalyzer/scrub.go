package modelanalyzer

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/capstan-dev/capstan"
)

// What leaves the server is scrubbed value by value, before it is encoded
// as JSON: each string passes the organization's redactor (secret values)
// and then the masker (sensitive names), and is cut only after both, so a
// secret or a name can neither hide behind a JSON escape nor be split by
// the cut. A literal value under a sensitive key (password, token …) is
// masked whatever its type or depth: it should never be in the catalog at
// all, and the redactor cannot know it.

// maxString bounds one string value sent to the model.
const maxString = 8 << 10

// scrubber is what a value passes before it leaves.
type scrubber struct {
	redact func(string) string // nil: nothing to redact
	mask   *masker
}

// text scrubs one string. A long one is cut to twice what is sent, back
// to its last space, before the work starts (the redactor's and the
// masker's work then stays bounded by what could be sent, never by what a
// job printed), and to what is sent after.
func (s scrubber) text(v string) string {
	if len(v) > 2*maxString {
		v = v[:2*maxString]
		if i := strings.LastIndexAny(v, " \t\n"); i > maxString {
			v = v[:i] // a name the cut split is not sent in part
		}
	}
	if s.redact != nil {
		v = s.redact(v)
	}
	return truncate(s.mask.mask(v), maxString)
}

// value scrubs a JSON-shaped value (maps, lists, strings, numbers …).
func (s scrubber) value(v any) any {
	switch x := v.(type) {
	case string:
		return s.text(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.value(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if str, ok := e.(string); capstan.SensitiveKey(k) && (!ok || !isReference(str)) {
				out[s.text(k)] = capstan.SecretMask
				continue
			}
			out[s.text(k)] = s.value(e)
		}
		return out
	}
	return v
}

// isReference reports a secret:<name> reference (not a value).
func isReference(s string) bool { return len(s) > 7 && s[:7] == "secret:" }

// encode scrubs v (any JSON-encodable value) and encodes it.
func (s scrubber) encode(v any, indent bool) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		return "", err
	}
	if indent {
		data, err = json.MarshalIndent(s.value(generic), "", " ")
	} else {
		data, err = json.Marshal(s.value(generic))
	}
	return string(data), err
}

// truncate cuts s to n bytes at most, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
