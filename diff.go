package capstan

import (
	"encoding/json"
	"reflect"
	"sort"
)

// PlanDiff is the structured difference between two revisions of a plan.
type PlanDiff struct {
	PlanID     string `json:"plan_id"`
	From       int    `json:"from"`
	To         int    `json:"to"`
	FromDigest string `json:"from_digest"`
	ToDigest   string `json:"to_digest"`
	// NodesAdded and NodesRemoved are whole nodes; NodesChanged lists each
	// changed field of a node kept by both.
	NodesAdded   []PlanNode   `json:"nodes_added"`
	NodesRemoved []PlanNode   `json:"nodes_removed"`
	NodesChanged []EntityDiff `json:"nodes_changed"`
	EdgesAdded   []Edge       `json:"edges_added"`
	EdgesRemoved []Edge       `json:"edges_removed"`
	// Bindings are compared on what decides the provider (status,
	// provider, sub-operation, constraints, requirement, reason).
	BindingsAdded   []string     `json:"bindings_added"`
	BindingsRemoved []string     `json:"bindings_removed"`
	BindingsChanged []EntityDiff `json:"bindings_changed"`
	Parameters      []FieldDiff  `json:"parameters"`
	// Gates names every gate added, removed or changed.
	Gates []string `json:"gates"`
}

// EntityDiff is the changed fields of one node or binding.
type EntityDiff struct {
	ID     string      `json:"id"`
	Fields []FieldDiff `json:"fields"`
}

// FieldDiff is one changed field: its path (job.run.script,
// gate.required_roles, parameters.replicas) with the old and new value
// (nil when absent).
type FieldDiff struct {
	Path string `json:"path"`
	Old  any    `json:"old"`
	New  any    `json:"new"`
}

// Empty reports whether the two revisions have the same content.
func (d *PlanDiff) Empty() bool { return d.FromDigest == d.ToDigest }

// Diff compares two revisions of one plan.
func Diff(a, b *PlanRevision) *PlanDiff {
	d := &PlanDiff{PlanID: a.PlanID, From: a.Revision, To: b.Revision, FromDigest: a.Digest, ToDigest: b.Digest,
		NodesAdded: []PlanNode{}, NodesRemoved: []PlanNode{}, NodesChanged: []EntityDiff{}, EdgesAdded: []Edge{}, EdgesRemoved: []Edge{},
		BindingsAdded: []string{}, BindingsRemoved: []string{}, BindingsChanged: []EntityDiff{}, Parameters: []FieldDiff{}, Gates: []string{}}
	gates := map[string]bool{}
	old := make(map[string]*PlanNode, len(a.Nodes))
	for i := range a.Nodes {
		old[a.Nodes[i].ID] = &a.Nodes[i]
	}
	kept := make(map[string]bool, len(b.Nodes))
	for i := range b.Nodes {
		n := &b.Nodes[i]
		kept[n.ID] = true
		o := old[n.ID]
		switch {
		case o == nil:
			d.NodesAdded = append(d.NodesAdded, *n)
		case !reflect.DeepEqual(o, n):
			fs := fieldDiffs("", asJSON(o), asJSON(n))
			if len(fs) == 0 {
				continue // equal as JSON (nil and empty alike)
			}
			d.NodesChanged = append(d.NodesChanged, EntityDiff{ID: n.ID, Fields: fs})
		default:
			continue
		}
		if n.Type == NodeGate || (o != nil && o.Type == NodeGate) {
			gates[n.ID] = true
		}
	}
	for i := range a.Nodes {
		if !kept[a.Nodes[i].ID] {
			d.NodesRemoved = append(d.NodesRemoved, a.Nodes[i])
			if a.Nodes[i].Type == NodeGate {
				gates[a.Nodes[i].ID] = true
			}
		}
	}
	d.EdgesAdded, d.EdgesRemoved = edgeDiff(AllEdges(a.Nodes, a.Edges), AllEdges(b.Nodes, b.Edges))
	d.BindingsAdded, d.BindingsRemoved, d.BindingsChanged = bindingDiff(a.Bindings, b.Bindings)
	d.Parameters = fieldDiffs("", map[string]any{"parameters": jsonValue(a.Parameters)}, map[string]any{"parameters": jsonValue(b.Parameters)})
	d.Gates = sortedSet(gates)
	return d
}

func edgeDiff(a, b []Edge) (added, removed []Edge) {
	inA := make(map[Edge]bool, len(a))
	for _, e := range a {
		inA[e] = true
	}
	inB := make(map[Edge]bool, len(b))
	added, removed = []Edge{}, []Edge{}
	for _, e := range b {
		inB[e] = true
		if !inA[e] {
			added = append(added, e)
		}
	}
	for _, e := range a {
		if !inB[e] {
			removed = append(removed, e)
		}
	}
	return added, removed
}

// bindingView is what a binding diff compares.
type bindingView struct {
	Status       BindingStatus         `json:"status"`
	Provider     *BoundProvider        `json:"provider"`
	SubOperation *SubOperationBinding  `json:"sub_operation"`
	Explicit     bool                  `json:"explicit"`
	Constraints  map[string]any        `json:"constraints"`
	Requirement  CapabilityRequirement `json:"requirement"`
	Reason       string                `json:"reason"`
}

func viewOf(b *ResourceBinding) bindingView {
	return bindingView{b.Status, b.Provider, b.SubOperation, b.Explicit, b.Constraints, b.Requirement, b.Reason}
}

func bindingDiff(a, b []ResourceBinding) (added, removed []string, changed []EntityDiff) {
	old := map[string]*ResourceBinding{}
	for i := range a {
		old[a[i].ID] = &a[i]
	}
	added, removed, changed = []string{}, []string{}, []EntityDiff{}
	kept := map[string]bool{}
	for i := range b {
		nb := &b[i]
		kept[nb.ID] = true
		ob := old[nb.ID]
		if ob == nil {
			added = append(added, nb.ID)
			continue
		}
		if ov, nv := viewOf(ob), viewOf(nb); !reflect.DeepEqual(ov, nv) {
			if fs := fieldDiffs("", asJSON(ov), asJSON(nv)); len(fs) > 0 {
				changed = append(changed, EntityDiff{ID: nb.ID, Fields: fs})
			}
		}
	}
	for _, x := range a {
		if !kept[x.ID] {
			removed = append(removed, x.ID)
		}
	}
	return added, removed, changed
}

// asJSON returns v as a JSON object (map), the form fields are compared in.
func asJSON(v any) map[string]any {
	m, _ := jsonValue(v).(map[string]any)
	return m
}

func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// fieldDiffs lists the leaves that differ between two JSON objects; lists
// are compared whole.
func fieldDiffs(prefix string, a, b map[string]any) []FieldDiff {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []FieldDiff
	for _, k := range sortedSet(keys) {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		av, bv := a[k], b[k]
		am, aObj := av.(map[string]any)
		bm, bObj := bv.(map[string]any)
		switch {
		case aObj && bObj:
			out = append(out, fieldDiffs(path, am, bm)...)
		case aObj && bv == nil:
			out = append(out, fieldDiffs(path, am, map[string]any{})...)
		case bObj && av == nil:
			out = append(out, fieldDiffs(path, map[string]any{}, bm)...)
		case !reflect.DeepEqual(av, bv):
			out = append(out, FieldDiff{Path: path, Old: av, New: bv})
		}
	}
	return out
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
