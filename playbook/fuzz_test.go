package playbook

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzCheck: no playbook makes Check panic or loop, it decides the same
// way twice, and none it accepts has a task, directly in a play's task
// list, that delegates or runs a local action.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"- hosts: target\n  tasks: []\n", "- hosts: target\n  tasks:\n    - {command: id, delegate_to: localhost}\n",
		"- hosts: target\n  vars: &v {a: 1}\n  tasks: [{debug: *v}]\n", "[{hosts: target, connection: local}]",
		"- hosts: target\n  tasks:\n    - &a {<<: *a}\n", "- hosts: target\n  tasks: &t\n    - {block: *t}\n    - {block: *t, rescue: *t}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		err := Check(text)
		if (err == nil) != (Check(text) == nil) {
			t.Fatal("two answers")
		}
		if err != nil {
			return
		}
		var plays []map[string]any
		if yaml.Unmarshal([]byte(text), &plays) != nil {
			return
		}
		for _, p := range plays {
			tasks, _ := p["tasks"].([]any)
			for _, task := range tasks {
				m, _ := task.(map[string]any)
				for _, k := range []string{"delegate_to", "local_action"} {
					if _, ok := m[k]; ok {
						t.Fatalf("accepted a task with %s: %q", k, text)
					}
				}
			}
		}
	})
}
