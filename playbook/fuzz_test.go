package playbook

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzCheck: no playbook makes Check panic, and none it accepts names
// delegate_to or local_action as a word.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"- hosts: target\n  tasks: []\n", "- hosts: target\n  tasks:\n    - {command: id, delegate_to: localhost}\n",
		"- hosts: target\n  vars: &v {a: 1}\n  tasks: [{debug: *v}]\n", "[{hosts: target, connection: local}]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if Check(text) != nil || strings.Contains(text, "#") { // a comment may name anything
			return
		}
		if m := regexp.MustCompile(`\b(delegate_to|local_action)\b`).FindString(text); m != "" {
			t.Fatalf("accepted a playbook naming %s: %q", m, text)
		}
	})
}
