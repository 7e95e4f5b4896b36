// Package pack reads scenario packs (one YAML file, or a directory of YAML
// files), validates them against the published JSON Schema with a real
// JSON Schema library, checks their meaning (references, DAGs, invariants)
// and reports every problem with its file and line.
package pack

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/capstan-dev/capstan"
)

// Schema is the published JSON Schema of the pack format.
//
//go:embed pack.schema.json
var Schema []byte

// MaxFileSize bounds one pack file.
const MaxFileSize = 4 << 20

// Problem is one thing wrong with a pack, located in a file.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Message)
}

var rootSchema, fragmentSchema, nodeSchema = compileSchemas()

func compileSchemas() (*jsonschema.Schema, *jsonschema.Schema, *jsonschema.Schema) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		panic("pack: embedded schema is not JSON: " + err.Error())
	}
	c := jsonschema.NewCompiler()
	const url = "https://capstan.dev/schema/pack.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		panic("pack: " + err.Error())
	}
	return c.MustCompile(url), c.MustCompile(url + "#/$defs/fragment"), c.MustCompile(url + "#/$defs/node")
}

// file is one parsed YAML file with its node tree for line lookups.
type file struct {
	name string
	root *yaml.Node
}

// ProblemsError carries located problems as an EINVALID error.
func ProblemsError(what string, problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	details := make([]string, len(problems))
	for i, p := range problems {
		details[i] = p.String()
	}
	msg := what + ": " + details[0]
	if len(details) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", msg, len(details)-1)
	}
	return &capstan.Error{Code: capstan.EINVALID, Message: msg, Details: details}
}

// LoadFS reads the pack at p in fsys: a .yaml/.yml file, or a directory
// whose pack.yaml names the pack and whose other YAML files add sections.
// known holds capability definitions the pack may reference without
// defining. It returns the pack with its digest, or every problem found.
func LoadFS(fsys fs.FS, p string, known map[string]*capstan.CapabilityDefinition) (*capstan.ScenarioPack, []Problem) {
	info, err := fs.Stat(fsys, p)
	if err != nil {
		return nil, []Problem{{File: p, Message: err.Error()}}
	}
	if !info.IsDir() {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, []Problem{{File: p, Message: err.Error()}}
		}
		return Parse(p, data, known)
	}
	entries, err := fs.ReadDir(fsys, p)
	if err != nil {
		return nil, []Problem{{File: p, Message: err.Error()}}
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(p, e.Name()))
		if err != nil {
			return nil, []Problem{{File: path.Join(p, e.Name()), Message: err.Error()}}
		}
		files[path.Join(p, e.Name())] = data
	}
	main := path.Join(p, "pack.yaml")
	if _, ok := files[main]; !ok {
		return nil, []Problem{{File: main, Message: "a pack directory needs a pack.yaml with id and version"}}
	}
	charts, problems := readCharts(fsys, p)
	if len(problems) > 0 {
		return nil, problems
	}
	return parseFiles(main, files, known, charts...)
}

// Parse reads a single-file pack.
func Parse(name string, data []byte, known map[string]*capstan.CapabilityDefinition) (*capstan.ScenarioPack, []Problem) {
	return parseFiles(name, map[string][]byte{name: data}, known)
}

func parseFiles(main string, files map[string][]byte, known map[string]*capstan.CapabilityDefinition, charts ...capstan.Chart) (*capstan.ScenarioPack, []Problem) {
	var problems []Problem
	var parsed []*file
	merged := &capstan.ScenarioPack{}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		f, part, probs := parseFile(name, files[name], name == main)
		problems = append(problems, probs...)
		if part == nil {
			continue
		}
		parsed = append(parsed, f)
		if name == main {
			merged.ID, merged.Version, merged.Source, merged.Description = part.ID, part.Version, part.Source, part.Description
		} else if part.ID != "" || part.Version != "" {
			problems = append(problems, Problem{File: name, Line: 1, Message: "only pack.yaml may set id and version"})
		}
		merged.Provides = append(merged.Provides, part.Provides...)
		merged.ResourceTypes = append(merged.ResourceTypes, part.ResourceTypes...)
		merged.Capabilities = append(merged.Capabilities, part.Capabilities...)
		merged.Scenarios = append(merged.Scenarios, part.Scenarios...)
		merged.Policies = append(merged.Policies, part.Policies...)
		merged.NodeTemplates = append(merged.NodeTemplates, part.NodeTemplates...)
		merged.FailureRules = append(merged.FailureRules, part.FailureRules...)
		merged.PatchPolicies = append(merged.PatchPolicies, part.PatchPolicies...)
		merged.RBAC = append(merged.RBAC, part.RBAC...)
		merged.Charts = append(merged.Charts, part.Charts...)
	}
	merged.Charts = append(merged.Charts, charts...)
	if len(problems) > 0 {
		return nil, problems
	}
	for i := range merged.Scenarios {
		if merged.Scenarios[i].Version == "" {
			merged.Scenarios[i].Version = merged.Version
		}
	}
	problems = append(problems, resolveCharts(merged, main)...)
	problems = append(problems, checkMeaning(merged, parsed, known)...)
	if len(problems) > 0 {
		return nil, problems
	}
	merged.Digest = Digest(merged)
	return merged, nil
}

// Digest returns the SHA-256 of the pack's canonical JSON content.
func Digest(p *capstan.ScenarioPack) string {
	c := *p
	data, _ := json.Marshal(struct {
		ID, Version, Source, Description string
		Types                            []capstan.ResourceType
		Caps                             []capstan.CapabilityDefinition
		Provides                         []string
		Scenarios                        []capstan.Scenario
		Policies                         []capstan.Policy
	}{c.ID, c.Version, c.Source, c.Description, c.ResourceTypes, c.Capabilities, c.Provides, c.Scenarios, c.Policies})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func parseFile(name string, data []byte, isMain bool) (*file, *capstan.ScenarioPack, []Problem) {
	if len(data) > MaxFileSize {
		return nil, nil, []Problem{{File: name, Message: fmt.Sprintf("file is %d bytes, more than the %d allowed", len(data), MaxFileSize)}}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, nil, []Problem{yamlProblem(name, err)}
	}
	if len(root.Content) == 0 {
		return nil, nil, []Problem{{File: name, Line: 1, Message: "file is empty"}}
	}
	var generic any
	if err := root.Content[0].Decode(&generic); err != nil {
		return nil, nil, []Problem{yamlProblem(name, err)}
	}
	js, err := json.Marshal(jsonCompatible(generic))
	if err != nil {
		return nil, nil, []Problem{{File: name, Line: 1, Message: "not representable as JSON: " + err.Error()}}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, nil, []Problem{{File: name, Line: 1, Message: err.Error()}}
	}
	f := &file{name: name, root: root.Content[0]}
	sch := fragmentSchema
	if isMain {
		sch = rootSchema
	}
	if err := sch.Validate(inst); err != nil {
		return nil, nil, schemaProblems(f, err)
	}
	var part capstan.ScenarioPack
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&part); err != nil {
		return nil, nil, []Problem{{File: name, Line: 1, Message: err.Error()}}
	}
	return f, &part, nil
}

// jsonCompatible turns YAML's map[string]any / map[any]any trees into JSON trees.
func jsonCompatible(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = jsonCompatible(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = jsonCompatible(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = jsonCompatible(x)
		}
		return t
	}
	return v
}

// LoadSet loads packs in order; each may use the capabilities defined by
// those before it and by known.
func LoadSet(fsys fs.FS, paths []string, known map[string]*capstan.CapabilityDefinition) ([]*capstan.ScenarioPack, []Problem) {
	caps := map[string]*capstan.CapabilityDefinition{}
	for k, v := range known {
		caps[k] = v
	}
	var out []*capstan.ScenarioPack
	var problems []Problem
	for _, p := range paths {
		pk, probs := LoadFS(fsys, p, caps)
		problems = append(problems, probs...)
		if pk == nil {
			continue
		}
		for i := range pk.Capabilities {
			c := pk.Capabilities[i]
			c.Pack = pk.Ref()
			caps[c.Key] = &c
		}
		out = append(out, pk)
	}
	return out, problems
}

// ParseNode reads one plan node given as a JSON object in the pack format
// (an advanced-mode edit), validated against the node schema.
func ParseNode(v map[string]any) (*capstan.PlanNode, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "node is not JSON: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "node is not JSON: %v", err)
	}
	if err := nodeSchema.Validate(inst); err != nil {
		var root yaml.Node
		_ = yaml.Unmarshal(js, &root)
		f := &file{name: "node", root: &root}
		if len(root.Content) > 0 {
			f.root = root.Content[0]
		}
		return nil, ProblemsError("node", schemaProblems(f, err))
	}
	var n capstan.PlanNode
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "node: %v", err)
	}
	return &n, nil
}
