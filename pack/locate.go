package pack

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/dag"
	"github.com/capstan-dev/capstan/playbook"
	"github.com/capstan-dev/capstan/policy"
)

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlProblem(name string, err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	return Problem{File: name, Line: line, Message: "malformed YAML: " + msg}
}

func schemaProblems(f *file, err error) []Problem {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{File: f.name, Line: 1, Message: err.Error()}}
	}
	var out []Problem
	seen := map[string]bool{}
	for _, leaf := range leaves(ve) {
		text := fmt.Sprintf("at /%s: %s", strings.Join(leaf.InstanceLocation, "/"), leaf.ErrorKind.LocalizedString(printer))
		if seen[text] {
			continue
		}
		seen[text] = true
		out = append(out, Problem{File: f.name, Line: lineOf(f.root, leaf.InstanceLocation), Message: text})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

var printer = message.NewPrinter(language.English)

// leaves returns the innermost causes of a validation error: the specific
// keyword failures rather than the composite ones that contain them.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// lineOf walks a JSON pointer's tokens through a YAML node tree and returns
// the line of the deepest node reached.
func lineOf(n *yaml.Node, tokens []string) int {
	line := n.Line
	for _, tok := range tokens {
		next := child(n, tok)
		if next == nil {
			return line
		}
		n, line = next, next.Line
	}
	return line
}

func child(n *yaml.Node, tok string) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == tok {
				return n.Content[i+1]
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
	}
	return nil
}

// findItem returns the file and line of the item with key field == value
// inside the top-level list section, searching every file of the pack.
func findItem(files []*file, section, field, value string) (string, int) {
	for _, f := range files {
		list := child(f.root, section)
		if list == nil || list.Kind != yaml.SequenceNode {
			continue
		}
		for _, item := range list.Content {
			if v := child(item, field); v != nil && v.Value == value {
				return f.name, item.Line
			}
		}
	}
	if len(files) > 0 {
		return files[0].name, 1
	}
	return "", 0
}

// scenarioItemLine finds the line of the item with id inside the list at
// path (plan/nodes, requires) of scenario, or the scenario's own line.
func scenarioItemLine(files []*file, scenario string, path []string, id string) (string, int) {
	for _, f := range files {
		list := child(f.root, "scenarios")
		if list == nil {
			continue
		}
		for _, item := range list.Content {
			if v := child(item, "id"); v == nil || v.Value != scenario {
				continue
			}
			items := item
			for _, p := range path {
				if items = child(items, p); items == nil {
					break
				}
			}
			if items != nil {
				for _, n := range items.Content {
					if v := child(n, "id"); v != nil && v.Value == id {
						return f.name, n.Line
					}
				}
			}
			return f.name, item.Line
		}
	}
	return findItem(files, "scenarios", "id", scenario)
}

var (
	nodeMention        = regexp.MustCompile(`^(?:scenario \S+: )?(?:node|stage|edge) ([a-z0-9][a-z0-9_.\-]*)`)
	requirementMention = regexp.MustCompile(`^(?:scenario \S+: )?requirement ([a-z0-9][a-z0-9_.\-]*)`)
)

// checkMeaning runs the domain's validation on each part of the pack and
// places every problem on the line of the item it is about.
func checkMeaning(p *capstan.ScenarioPack, files []*file, known map[string]*capstan.CapabilityDefinition) []Problem {
	c := &meaningCheck{pack: p, files: files, caps: map[string]*capstan.CapabilityDefinition{}}
	if !capstan.ValidSemver(p.Version) {
		c.at(files[0].name, lineOf(files[0].root, []string{"version"}), fmt.Sprintf("version %q is not semver", p.Version))
	}
	c.capabilities(known)
	c.resourceTypes()
	c.scenarios()
	c.policies()
	return c.out
}

// meaningCheck collects the problems of one pack, each at its line; caps
// are the capabilities the pack may refer to (its own and those known).
type meaningCheck struct {
	pack  *capstan.ScenarioPack
	files []*file
	caps  map[string]*capstan.CapabilityDefinition
	out   []Problem
}

func (c *meaningCheck) at(file string, line int, msg string) {
	c.out = append(c.out, Problem{File: file, Line: line, Message: msg})
}

func (c *meaningCheck) capabilities(known map[string]*capstan.CapabilityDefinition) {
	for k, v := range known {
		c.caps[k] = v
	}
	for i := range c.pack.Capabilities {
		def := &c.pack.Capabilities[i]
		f, l := findItem(c.files, "capabilities", "key", def.Key)
		if err := def.Validate(); err != nil {
			for _, d := range capstan.ErrorDetails(err) {
				c.at(f, l, "capability "+def.Key+": "+d)
			}
		}
		if c.caps[def.Key] != nil && c.caps[def.Key].Pack == "" && known[def.Key] == nil {
			c.at(f, l, "capability "+def.Key+" is defined twice")
		}
		c.caps[def.Key] = def
	}
	for i := range c.pack.Capabilities {
		def := &c.pack.Capabilities[i]
		for _, imp := range def.Implies {
			if c.caps[imp] == nil {
				f, l := findItem(c.files, "capabilities", "key", def.Key)
				c.at(f, l, fmt.Sprintf("capability %s implies unknown capability %s", def.Key, imp))
			}
		}
	}
}

func (c *meaningCheck) resourceTypes() {
	for i := range c.pack.ResourceTypes {
		t := &c.pack.ResourceTypes[i]
		if err := t.Validate(); err != nil {
			f, l := findItem(c.files, "resource_types", "key", t.Key)
			for _, d := range capstan.ErrorDetails(err) {
				c.at(f, l, d)
			}
		}
	}
}

func (c *meaningCheck) scenarios() {
	seen := map[string]bool{}
	for i := range c.pack.Scenarios {
		s := &c.pack.Scenarios[i]
		f, l := findItem(c.files, "scenarios", "id", s.ID)
		if seen[s.ID] {
			c.at(f, l, "scenario "+s.ID+" is declared twice")
		}
		seen[s.ID] = true
		if s.Version != c.pack.Version {
			c.at(f, l, fmt.Sprintf("scenario %s has version %s but the pack is %s", s.ID, s.Version, c.pack.Version))
		}
		for _, d := range c.scenarioDetails(s) {
			nf, nl := f, l
			if m := nodeMention.FindStringSubmatch(d); m != nil {
				nf, nl = scenarioItemLine(c.files, s.ID, []string{"plan", "nodes"}, m[1])
			} else if m := requirementMention.FindStringSubmatch(d); m != nil {
				nf, nl = scenarioItemLine(c.files, s.ID, []string{"requires"}, m[1])
			}
			if !strings.HasPrefix(d, "scenario ") {
				d = "scenario " + s.ID + ": " + d
			}
			c.at(nf, nl, d)
		}
	}
}

// scenarioDetails are a scenario's problems: its own validation, its
// plan's graph and the capabilities it provides.
func (c *meaningCheck) scenarioDetails(s *capstan.Scenario) []string {
	var details []string
	if err := s.Validate(c.caps); err != nil {
		details = capstan.ErrorDetails(err)
	}
	details = append(details, dag.Check(s.Plan.Nodes, s.Plan.Edges)...)
	details = append(details, playbook.ProblemsOf(s.Plan.Nodes)...)
	for _, pc := range s.Provides {
		if c.caps[pc.Capability] == nil {
			details = append(details, "provides unknown capability "+pc.Capability)
		}
	}
	return details
}

func (c *meaningCheck) policies() {
	for _, pol := range c.pack.Policies {
		if _, err := policy.Compile(pol); err != nil {
			f, l := findItem(c.files, "policies", "id", pol.ID)
			c.at(f, l, capstan.ErrorMessage(err))
		}
		if pol.Capability != "" && c.caps[pol.Capability] == nil {
			f, l := findItem(c.files, "policies", "id", pol.ID)
			c.at(f, l, fmt.Sprintf("policy %s applies to unknown capability %s", pol.ID, pol.Capability))
		}
	}
	for _, pp := range c.pack.PatchPolicies {
		if _, err := policy.CompilePatches([]capstan.PatchPolicy{pp}); err != nil {
			f, l := findItem(c.files, "patch_policies", "id", pp.ID)
			for _, d := range capstan.ErrorDetails(err) {
				c.at(f, l, d)
			}
		}
	}
	c.failureRules()
}

// failureRules checks that each rule names a node of one of the pack's
// scenarios and inserts only templates the pack publishes.
func (c *meaningCheck) failureRules() {
	nodes := map[string]bool{}
	for _, s := range c.pack.Scenarios {
		for _, n := range s.Plan.Nodes {
			nodes[n.ID] = true
		}
	}
	templates := map[string]bool{}
	for _, t := range c.pack.NodeTemplates {
		templates[t.Name] = true
	}
	for _, r := range c.pack.FailureRules {
		f, l := findItem(c.files, "failure_rules", "id", r.ID)
		if !nodes[r.Node] {
			c.at(f, l, fmt.Sprintf("failure rule %s: no scenario of the pack has a node %s", r.ID, r.Node))
		}
		for _, ch := range r.Patch {
			if ch.Template != "" && !templates[ch.Template] {
				c.at(f, l, fmt.Sprintf("failure rule %s: the pack publishes no node template %s", r.ID, ch.Template))
			}
		}
	}
}
