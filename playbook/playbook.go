// Package playbook decides whether an ansible job's playbook may run:
// plays run on the job's target, never on the controller. A play that
// asks for the controller plainly — delegate_to, local_action, a local
// connection, a host other than the target, a connection variable set,
// a host added, a file of the controller's read in — is refused where it
// is written (pack lint, plan edits and patches) and again before it
// runs, with the same words. It reads the playbook's structure: plays,
// their task lists, blocks and tasks; what a task's module is given is
// the module's own business (a key named connection deep inside a
// template's variables is no keyword). What a template computes at run
// time cannot be read here; the job sandbox confines it (the controller
// is the sandbox, docs/SANDBOX.md).
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

// Host is the one host of an ansible job's inventory.
const Host = "target"

// taskKeywords move a task to the controller, or another host.
var taskKeywords = map[string]string{
	"delegate_to":    "delegates a task to another host (the controller, as localhost)",
	"local_action":   "runs a task on the controller",
	"delegate_facts": "belongs to delegation, which is refused",
}

// refusedModules act on the controller's inventory or files, or bring in
// what this one file does not hold.
var refusedModules = map[string]string{
	"add_host":        "adds a host (the controller, with a local connection) to the play",
	"group_by":        "builds groups a later play could name",
	"include_vars":    "reads variables from a file of the controller's",
	"include_tasks":   "runs tasks from a file of the controller's: a playbook is one file",
	"import_tasks":    "runs tasks from a file of the controller's: a playbook is one file",
	"include_role":    "runs a role from the controller's files: a playbook is one file",
	"import_role":     "runs a role from the controller's files: a playbook is one file",
	"import_playbook": "imports another playbook: a playbook is one file",
	"include":         "runs tasks from a file of the controller's: a playbook is one file",
}

// playKeywords of a play that bring in the controller's files.
var playKeywords = map[string]string{
	"roles":      "runs roles from the controller's files: a playbook is one file",
	"vars_files": "reads variables from files of the controller's",
}

// taskLists are the keys of a play, or a block, that hold tasks.
var taskLists = []string{"tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always"}

// connectionVar is a variable that chooses how, and where, a host is
// reached: the inventory sets it, a playbook may not.
var connectionVar = regexp.MustCompile(`^ansible_(connection|host|port|user|password|private_key_file|ssh_\w+|sftp_\w+|scp_\w+|python_interpreter|become_\w*|shell_executable|executable)$`)

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
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	root = resolve(root)
	if root == nil || root.Kind != yaml.SequenceNode {
		return capstan.Errorf(capstan.EINVALID, "playbook: a list of plays, each with hosts: %s", Host)
	}
	c := &check{seen: map[*yaml.Node]bool{}}
	for i, play := range root.Content {
		c.play(fmt.Sprintf("play %d", i+1), resolve(play))
	}
	if len(c.problems) == 0 {
		return nil
	}
	sort.Strings(c.problems)
	c.problems = compact(c.problems)
	err := capstan.Errorf(capstan.EINVALID, "playbook runs on the controller, which is refused (runner ansible acts on its target alone): %s", strings.Join(c.problems, "; "))
	err.Details = c.problems
	return err
}

type check struct {
	problems []string
	depth    int
	seen     map[*yaml.Node]bool // task lists checked (an alias may name one again, or itself)
}

func (c *check) add(path, why string) { c.problems = append(c.problems, path+": "+why) }

// play checks a play's own keywords, then its task lists.
func (c *check) play(path string, play *yaml.Node) {
	if play == nil || play.Kind != yaml.MappingNode {
		c.add(path, "a play is a mapping")
		return
	}
	hosts := false
	for k, v := range pairs(play) {
		switch {
		case k == "hosts":
			hosts = true
			if !targetOnly(v) {
				c.add(path+".hosts", fmt.Sprintf("must be %s (or all, which is %s alone)", Host, Host))
			}
		case k == "import_playbook" || module(k) == "import_playbook":
			hosts = true
			c.add(path, refusedModules["import_playbook"])
		case k == "connection":
			c.connection(path+".connection", v)
		case k == "vars":
			c.vars(path+".vars", v)
		case playKeywords[k] != "":
			c.add(path+"."+k, playKeywords[k])
		case taskKeywords[k] != "":
			c.add(path+"."+k, taskKeywords[k])
		case isTaskList(k):
			c.tasks(path+"."+k, v)
		}
	}
	if !hosts {
		c.add(path, "names no hosts")
	}
}

// tasks checks a list of tasks (or blocks).
func (c *check) tasks(path string, list *yaml.Node) {
	if list == nil || list.Kind != yaml.SequenceNode || c.seen[list] {
		return
	}
	c.seen[list] = true
	if c.depth++; c.depth > 64 {
		c.add(path, "blocks nested more than 64 deep")
		return
	}
	defer func() { c.depth-- }()
	for i, t := range list.Content {
		c.task(fmt.Sprintf("%s[%d]", path, i), resolve(t))
	}
}

// task checks one task's keywords, its module, and its blocks.
func (c *check) task(path string, task *yaml.Node) {
	if task == nil || task.Kind != yaml.MappingNode {
		return
	}
	for k, v := range pairs(task) {
		m := module(k)
		switch {
		case taskKeywords[k] != "":
			c.add(path+"."+k, taskKeywords[k])
		case k == "connection":
			c.connection(path+".connection", v)
		case k == "vars":
			c.vars(path+".vars", v)
		case k == "action":
			c.action(path+".action", v)
		case refusedModules[m] != "":
			c.add(path+"."+k, refusedModules[m])
		case m == "set_fact":
			c.setFact(path+"."+k, v)
		case isTaskList(k):
			c.tasks(path+"."+k, v)
		}
	}
}

func (c *check) connection(path string, v *yaml.Node) {
	if v == nil || v.Kind != yaml.ScalarNode || v.Value != "ssh" {
		c.add(path, "only ssh reaches the target (a local connection runs on the controller)")
	}
}

// vars checks the names a vars section sets.
func (c *check) vars(path string, v *yaml.Node) {
	if v == nil || v.Kind != yaml.MappingNode {
		return
	}
	for k := range pairs(v) {
		c.varName(path+"."+k, k)
	}
}

// setFact checks the names set_fact sets, in either form (a mapping, or
// key=value words).
func (c *check) setFact(path string, v *yaml.Node) {
	switch {
	case v == nil:
	case v.Kind == yaml.MappingNode:
		c.vars(path, v)
	case v.Kind == yaml.ScalarNode:
		for _, word := range strings.Fields(v.Value) {
			if name, _, ok := strings.Cut(word, "="); ok {
				c.varName(path+"."+name, name)
			}
		}
	}
}

func (c *check) varName(path, name string) {
	switch {
	case strings.Contains(name, "{{") || strings.Contains(name, "{%"):
		c.add(path, "a variable named by a template could be a connection variable")
	case connectionVar.MatchString(name):
		c.add(path, name+" chooses where the play runs; the inventory sets it, a playbook may not")
	}
}

// action checks the module an action: keyword names (a string's first
// word, or a mapping's module).
func (c *check) action(path string, v *yaml.Node) {
	name := ""
	switch {
	case v == nil:
	case v.Kind == yaml.ScalarNode:
		if f := strings.Fields(v.Value); len(f) > 0 {
			name = f[0]
		}
	case v.Kind == yaml.MappingNode:
		for k, x := range pairs(v) {
			if k == "module" && x.Kind == yaml.ScalarNode {
				name = x.Value
			}
		}
	}
	if why := refusedModules[module(name)]; why != "" {
		c.add(path, why)
	}
	if module(name) == "set_fact" {
		c.add(path, "set_fact through action: is refused: write it as a task of its own")
	}
}

// module is a task key without its collection (ansible.builtin.,
// ansible.legacy., ansible.).
func module(k string) string {
	for _, p := range []string{"ansible.builtin.", "ansible.legacy.", "ansible."} {
		if rest, ok := strings.CutPrefix(k, p); ok {
			return rest
		}
	}
	return k
}

func isTaskList(k string) bool {
	for _, l := range taskLists {
		if k == l {
			return true
		}
	}
	return false
}

// targetOnly reports hosts: target, all, or a list of one of them.
func targetOnly(v *yaml.Node) bool {
	switch {
	case v == nil:
		return false
	case v.Kind == yaml.ScalarNode:
		return v.Value == Host || v.Value == "all"
	case v.Kind == yaml.SequenceNode && len(v.Content) == 1:
		return targetOnly(resolve(v.Content[0]))
	}
	return false
}

// pairs yields a mapping's keys and values, aliases followed, and the
// pairs of what a merge key (<<) brings in, each mapping once (a mapping
// may merge itself).
func pairs(m *yaml.Node) func(func(string, *yaml.Node) bool) {
	return func(yield func(string, *yaml.Node) bool) {
		seen := map[*yaml.Node]bool{}
		var walk func(m *yaml.Node) bool
		walk = func(m *yaml.Node) bool {
			if seen[m] || len(seen) > 64 {
				return true
			}
			seen[m] = true
			for i := 0; i+1 < len(m.Content); i += 2 {
				k, v := resolve(m.Content[i]), resolve(m.Content[i+1])
				switch {
				case k == nil:
				case k.Value == "<<":
					merged := []*yaml.Node{v}
					if v != nil && v.Kind == yaml.SequenceNode {
						merged = v.Content
					}
					for _, x := range merged {
						if x = resolve(x); x != nil && x.Kind == yaml.MappingNode && !walk(x) {
							return false
						}
					}
				case !yield(k.Value, v):
					return false
				}
			}
			return true
		}
		walk(m)
	}
}

// resolve follows an alias to what it names.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func compact(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
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
