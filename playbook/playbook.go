// Package playbook decides whether an ansible job's playbook may run:
// plays run on the job's target, never on the controller. A play that
// asks for the controller plainly — delegate_to, local_action, a local
// connection, a host other than the target, a connection variable — is
// refused where it is written (pack lint, plan edits and patches) and
// again before it runs, with the same words. What a template computes at
// run time cannot be read here; the job sandbox confines it (the
// controller is the sandbox, docs/SANDBOX.md).
package playbook

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/capstan-dev/capstan"
)

// MaxSize bounds a playbook.
const MaxSize = 256 << 10

// controllerKeys are keywords that move a task, or a play, to the
// controller, or give a host a connection of the playbook's choosing.
var controllerKeys = map[string]string{
	"delegate_to":    "delegates a task to another host (the controller, as localhost)",
	"local_action":   "runs a task on the controller",
	"delegate_facts": "belongs to delegation, which is refused",
	"add_host":       "adds a host (the controller, with a local connection) to the play",
	"group_by":       "builds groups a later play could name",
}

// connectionVars are variables that choose how, and where, a host is
// reached: the inventory sets them, a playbook may not.
var connectionVars = regexp.MustCompile(`\b(ansible_(connection|host|port|user|ssh_\w+|python_interpreter|become_\w*|shell_executable|executable)|delegate_to|local_action)\b`)

// Check reads a playbook and says why it may not run, or nil. Its problems
// are sorted, each naming the path of the item.
func Check(text string) error {
	if len(text) > MaxSize {
		return capstan.Errorf(capstan.EINVALID, "playbook is %d bytes, more than %d", len(text), MaxSize)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return capstan.Errorf(capstan.EINVALID, "playbook is not YAML: %v", err)
	}
	c := &check{seen: map[*yaml.Node]bool{}}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.SequenceNode {
		return capstan.Errorf(capstan.EINVALID, "playbook: a list of plays, each with hosts: %s", Host)
	}
	for i, play := range root.Content {
		c.play(fmt.Sprintf("play %d", i+1), resolve(play))
	}
	if len(c.problems) == 0 {
		return nil
	}
	sort.Strings(c.problems)
	err := capstan.Errorf(capstan.EINVALID, "playbook runs on the controller, which is refused (runner ansible acts on its target alone): %s", strings.Join(c.problems, "; "))
	err.Details = c.problems
	return err
}

// Host is the one host of an ansible job's inventory.
const Host = "target"

type check struct {
	problems []string
	seen     map[*yaml.Node]bool
}

func (c *check) add(path, why string) { c.problems = append(c.problems, path+": "+why) }

// play checks a play's hosts and connection, then every node in it.
func (c *check) play(path string, play *yaml.Node) {
	if play.Kind != yaml.MappingNode {
		c.add(path, "a play is a mapping")
		return
	}
	hosts := ""
	for i := 0; i+1 < len(play.Content); i += 2 {
		k, v := resolve(play.Content[i]), resolve(play.Content[i+1])
		switch k.Value {
		case "hosts":
			hosts = v.Value
			if v.Kind != yaml.ScalarNode || (v.Value != Host && v.Value != "all") {
				c.add(path, fmt.Sprintf("hosts must be %s (or all, which is %s alone)", Host, Host))
			}
		case "import_playbook", "ansible.builtin.import_playbook":
			hosts = Host
			c.add(path, "imports another playbook, which is not part of the job")
		}
	}
	if hosts == "" {
		c.add(path, "names no hosts")
	}
	c.walk(path, play)
}

// walk checks every key and scalar under n.
func (c *check) walk(path string, n *yaml.Node) {
	n = resolve(n)
	if n == nil || c.seen[n] {
		return
	}
	c.seen[n] = true
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
			where := path + "." + k.Value
			if why, ok := controllerKeys[strings.TrimPrefix(k.Value, "ansible.builtin.")]; ok {
				c.add(where, why)
			}
			if k.Value == "connection" && (v.Kind != yaml.ScalarNode || v.Value != "ssh") {
				c.add(where, "only ssh reaches the target (a local connection runs on the controller)")
			}
			c.scalar(where, k)
			c.walk(where, v)
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			c.walk(fmt.Sprintf("%s[%d]", path, i), item)
		}
	case yaml.ScalarNode:
		c.scalar(path, n)
	}
}

// scalar refuses a value or key that names a connection variable: a
// set_fact or vars entry, in any form, that would move the host.
func (c *check) scalar(path string, n *yaml.Node) {
	if m := connectionVars.FindString(n.Value); m != "" {
		c.add(path, m+" chooses where the play runs; the inventory sets it, a playbook may not")
	}
}

// resolve follows an alias to what it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// ProblemsOf lists the refused playbooks of nodes' ansible jobs (runs
// and compensations), one problem per node.
func ProblemsOf(nodes []capstan.PlanNode) []string {
	var out []string
	for _, n := range nodes {
		if n.Job == nil {
			continue
		}
		runs := []capstan.RunSpec{n.Job.Run}
		if c := n.Job.Controls.Rollback.Compensation; c != nil {
			runs = append(runs, *c)
		}
		for _, r := range runs {
			if r.Runner != "ansible" || r.Playbook == "" {
				continue
			}
			if err := Check(r.Playbook); err != nil {
				out = append(out, fmt.Sprintf("node %s: %s", n.ID, capstan.ErrorMessage(err)))
			}
		}
	}
	return out
}
