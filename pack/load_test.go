package pack_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/pack"
	"github.com/capstan-dev/capstan/packs"
)

func TestBundledPacksAreValid(t *testing.T) {
	loaded, problems := pack.LoadSet(packs.FS, packs.Order, nil)
	require.Empty(t, problems, "bundled packs must lint clean")
	require.Len(t, loaded, len(packs.Order))
	types := map[capstan.NodeType]bool{}
	for _, p := range loaded {
		require.Len(t, p.Digest, 64)
		for _, s := range p.Scenarios {
			require.Equal(t, p.Version, s.Version)
			for _, n := range s.Plan.Nodes {
				types[n.Type] = true
			}
		}
	}
	for _, nt := range capstan.NodeTypes {
		require.True(t, types[nt], "bundled packs use node type %s", nt)
	}
}

func TestDigestIsStableAndContentSensitive(t *testing.T) {
	a, probs := pack.LoadSet(packs.FS, []string{"kubernetes", "minio.yaml"}, nil)
	require.Empty(t, probs)
	b, _ := pack.LoadSet(packs.FS, []string{"kubernetes", "minio.yaml"}, nil)
	require.Equal(t, a[1].Digest, b[1].Digest)
	b[1].Description = "changed"
	require.NotEqual(t, a[1].Digest, pack.Digest(b[1]))
}

// known returns the kubernetes pack's capabilities, for packs that use them.
func known(t *testing.T) map[string]*capstan.CapabilityDefinition {
	t.Helper()
	ps, probs := pack.LoadSet(packs.FS, []string{"kubernetes"}, nil)
	require.Empty(t, probs)
	out := map[string]*capstan.CapabilityDefinition{}
	for i := range ps[0].Capabilities {
		out[ps[0].Capabilities[i].Key] = &ps[0].Capabilities[i]
	}
	return out
}

func TestLintReportsEveryProblemWithFileAndLine(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // substrings, each must appear in some problem, in order
	}{
		{"malformed yaml", "id: x\nversion: 1.0.0\n  bad: indent\n", []string{"p.yaml:3: malformed YAML"}},
		{"empty file", "", []string{"file is empty"}},
		{"missing version", "id: x\n", []string{"p.yaml:1:", "version"}},
		{"bad semver", "id: x\nversion: 1.0\n", []string{"p.yaml:2:", "/version"}},
		{"unknown field", "id: x\nversion: 1.0.0\nstatus: running\n", []string{"p.yaml:1:", "status"}},
		{"wrong type", "id: x\nversion: 1.0.0\ncapabilities:\n  - key: a.b\n    category: c\n    constraint_schema:\n      size: {type: integr}\n", []string{"p.yaml:7:", "/capabilities/0/constraint_schema/size/type"}},
		{"unknown capability", `id: x
version: 1.0.0
scenarios:
  - id: x.install
    action: install
    target_resource_type: x
    requires:
      - {id: db, capability: nope.db, strategy: existing}
    plan:
      nodes:
        - {id: a, type: verification, title: A, probes: [{name: p, type: sim}]}
`, []string{"p.yaml:8:", "requirement db: unknown capability \"nope.db\""}},
		{"cycle", `id: x
version: 1.0.0
scenarios:
  - id: x.install
    action: install
    target_resource_type: x
    plan:
      nodes:
        - {id: a, type: verification, title: A, after: [b], probes: [{name: p, type: sim}]}
        - {id: b, type: verification, title: B, after: [a], probes: [{name: p, type: sim}]}
`, []string{"closes a cycle"}},
		{"analysis input nobody produces", `id: x
version: 1.0.0
scenarios:
  - id: x.repair
    action: repair
    target_resource_type: x
    plan:
      nodes:
        - {id: a, type: ai_analysis, title: A, analysis: {question: "why?", inputs: [logs]}}
`, []string{"node a: analysis input logs is no job's output artifact"}},
		{"stage child waits for its stage", `id: x
version: 1.0.0
scenarios:
  - id: x.install
    action: install
    target_resource_type: x
    plan:
      nodes:
        - {id: s, type: stage, title: S, children: [a]}
        - {id: a, type: verification, title: A, after: [s], probes: [{name: p, type: sim}]}
`, []string{"cycle"}},
		{"template names a provider", `id: x
version: 1.0.0
capabilities:
  - {key: x.cap, category: c}
scenarios:
  - id: x.install
    action: install
    target_resource_type: x
    requires:
      - {id: r, capability: x.cap, strategy: explicit, constraints: {}}
    plan:
      nodes:
        - {id: a, type: gate, title: A, gate: {type: approval, reason: r, required_roles: [sre]}}
`, []string{}},
		{"bad policy", `id: x
version: 1.0.0
policies:
  - {id: p1, description: d, require: "provider.attributes +"}
`, []string{"p.yaml:4:", "policy p1"}},
		{"policy not bool", `id: x
version: 1.0.0
policies:
  - {id: p1, description: d, require: "1 + 1"}
`, []string{"must be bool"}},
		{"job without contract and a bad duration", `id: x
version: 1.0.0
scenarios:
  - id: x.install
    action: install
    target_resource_type: x
    plan:
      nodes:
        - {id: a, type: job, title: A}
        - {id: b, type: job, title: B, job: {run: {runner: sim, duration: 5 minutes}}}
`, []string{"/scenarios/0/plan/nodes/0", "/scenarios/0/plan/nodes/1/job/run/duration"}},
		{"a reapply with manifests, a drift probe naming an object", `id: x
version: 1.0.0
scenarios:
  - id: x.repair
    action: repair
    target_resource_type: x
    plan:
      nodes:
        - {id: a, type: job, title: A, job: {run: {runner: kubernetes, target: c, reapply: true, manifests: "kind: X"}}}
        - {id: b, type: verification, title: B, probes: [{name: p, type: kubernetes, target: c, drift: true, object: {api_version: v1, kind: Service, name: s}}]}
        - {id: c, type: job, title: C, job: {run: {runner: shell, script: "true", reapply: true}}}
        - {id: d, type: verification, title: D, probes: [{name: q, type: file, target: c, path: /x, drift: true}]}
`, []string{"/scenarios/0/plan/nodes/0/job/run", "/scenarios/0/plan/nodes/1/probes/0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, problems := pack.Parse("p.yaml", []byte(tt.yaml), known(t))
			if len(tt.want) == 0 {
				require.NotNil(t, p, "problems: %v", problems)
				return
			}
			require.Nil(t, p)
			var all []string
			for _, pr := range problems {
				all = append(all, pr.String())
			}
			text := strings.Join(all, "\n")
			for _, w := range tt.want {
				require.Contains(t, text, w)
			}
		})
	}
}

func TestDirectoryPackNeedsPackYAML(t *testing.T) {
	fsys := fstest.MapFS{"d/other.yaml": {Data: []byte("capabilities: []\n")}}
	_, problems := pack.LoadFS(fsys, "d", nil)
	require.Len(t, problems, 1)
	require.Contains(t, problems[0].String(), "d/pack.yaml")
}

func TestOversizedFileIsRejected(t *testing.T) {
	big := make([]byte, pack.MaxFileSize+1)
	_, problems := pack.Parse("big.yaml", big, nil)
	require.Len(t, problems, 1)
	require.Contains(t, problems[0].Message, "more than")
}
