package main

import (
	"regexp"
	"strings"
)

// failedAt is the line testing's t.Error and t.Fatal start with: the file
// and line of the call, then the message.
var failedAt = regexp.MustCompile(`^\s+(\S+_test\.go:\d+): ?(.*)$`)

// cleanupLog starts what cmd/capstan's cleanup logs after a failure (a
// server's last lines): never the failure itself.
const cleanupLog = "the server of "

// whyWidth bounds a reason: one line of a log, never a page.
const whyWidth = 300

// reason is why a test failed, in a line, from its own output: the place
// of its first failed check and what the check said (testify's Error and
// Messages, or t.Fatal's message). "" when the output says no more than
// that its subtests failed.
func reason(output string) string {
	lines := strings.Split(output, "\n")
	at := failedLine(lines)
	if at < 0 {
		return ""
	}
	m := failedAt.FindStringSubmatch(lines[at])
	parts := []string{m[1]}
	if msg := strings.TrimSpace(m[2]); msg != "" {
		parts = append(parts, msg)
	}
	for _, next := range lines[at+1:] {
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

// failedLine is the index of the line a failed check starts (-1: none).
// testify's failure is the first with an Error Trace; t.Fatal's is the
// test's last line before its cleanups (t.Log lines come before it, a
// server's last words after it).
func failedLine(lines []string) int {
	for i, l := range lines {
		if failedAt.MatchString(l) && i+1 < len(lines) && strings.Contains(lines[i+1], "Error Trace:") {
			return i
		}
	}
	at := -1
	for i, l := range lines {
		if m := failedAt.FindStringSubmatch(l); m != nil && !strings.HasPrefix(m[2], cleanupLog) {
			at = i
		}
	}
	return at
}

// testifyFields are the fields of a testify failure that say where, not why.
var testifyFields = map[string]bool{"Error Trace": true, "Test": true}

func clip(s string) string {
	if len(s) <= whyWidth {
		return s
	}
	return s[:whyWidth] + "…"
}
