package main

import (
	"regexp"
	"strings"
)

// failedAt is the line testing's t.Error and t.Fatal start with: the file
// and line of the call, then the message.
var failedAt = regexp.MustCompile(`^\s+(\S+_test\.go:\d+): ?(.*)$`)

// whyWidth bounds a reason: one line of a log, never a page.
const whyWidth = 300

// reason is why a test failed, in a line, from its own output: the place
// of its first failed check and what the check said (testify's Error and
// Messages, or t.Fatal's message). "" when the output says no more than
// that its subtests failed.
func reason(output string) string {
	lines := strings.Split(output, "\n")
	for i, l := range lines {
		m := failedAt.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		parts := []string{m[1]}
		if msg := strings.TrimSpace(m[2]); msg != "" {
			parts = append(parts, msg)
		}
		for _, next := range lines[i+1:] {
			if !strings.HasPrefix(next, "        ") || failedAt.MatchString(next) {
				break // the message ends where the test's next line starts
			}
			field, value, _ := strings.Cut(strings.TrimSpace(next), ":")
			switch {
			case field == "Error" || field == "Messages":
				parts = append(parts, strings.TrimSpace(value))
			case len(parts) == 1 && !testifyFields[field]:
				parts = append(parts, strings.TrimSpace(next)) // a multi-line message's next line
			}
		}
		return clip(strings.Join(parts, ": "))
	}
	return ""
}

// testifyFields are the fields of a testify failure that say where, not why.
var testifyFields = map[string]bool{"Error Trace": true, "Test": true}

func clip(s string) string {
	if len(s) <= whyWidth {
		return s
	}
	return s[:whyWidth] + "…"
}
