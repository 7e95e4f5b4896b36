package capstan

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sort"
	"time"
)

// RevisionSource says how a plan revision came to be.
type RevisionSource struct {
	Actor string    `json:"actor,omitempty"`
	At    time.Time `json:"at,omitzero"`
	// Kind is planned (revision 1), edit (an editPlan batch before start)
	// or patch (an applied PlanPatch).
	Kind    string       `json:"kind,omitempty"`
	PatchID string       `json:"patch_id,omitempty"`
	Changes []PlanChange `json:"changes,omitempty"`
}

// Revision kinds.
const (
	RevisionPlanned = "planned"
	RevisionEdit    = "edit"
	RevisionPatch   = "patch"
)

// PlanRevision is an immutable snapshot of a plan's content at one
// revision (SPEC §10). Stores write it when a plan reaches a revision it
// has no snapshot of, and never change it: later runtime changes of the
// plan record (a binding resolved by its sub-operation, the status) are
// not part of any revision.
type PlanRevision struct {
	PlanID   string `json:"plan_id"`
	Revision int    `json:"revision"`
	Digest   string `json:"digest"`
	// Parent is the digest of the revision this one was made from.
	Parent string `json:"parent,omitempty"`
	RevisionContent
	Source RevisionSource `json:"source"`
}

// RevisionContent is what a revision's digest covers: everything that
// decides what the operation does.
type RevisionContent struct {
	ScenarioRef string            `json:"scenario_ref"`
	Nodes       []PlanNode        `json:"nodes"`
	Edges       []Edge            `json:"edges"`
	Bindings    []ResourceBinding `json:"bindings"`
	Parameters  map[string]any    `json:"parameters,omitempty"`
}

// ContentOf returns a plan's revision content (sharing its slices).
func ContentOf(p *Plan) RevisionContent {
	return RevisionContent{ScenarioRef: p.ScenarioRef, Nodes: p.Nodes, Edges: p.Edges, Bindings: p.Bindings, Parameters: p.Parameters}
}

// Digest is the SHA-256 of the content's canonical form: its JSON, whose
// struct fields have a fixed order and whose map keys are sorted, with
// nil and empty lists written alike.
func (c RevisionContent) Digest() string {
	_, d := c.canonical()
	return d
}

// canonical returns the content's canonical JSON and its digest.
func (c RevisionContent) canonical() ([]byte, string) {
	c.Nodes, c.Edges, c.Bindings = nonNil(c.Nodes), nonNil(c.Edges), nonNil(c.Bindings)
	b, err := json.Marshal(c)
	if err != nil { // only JSON values reach here: plans are decoded from JSON or built from it
		panic("capstan: digest of a value that is not JSON: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return b, "sha256:" + hex.EncodeToString(sum[:])
}

// snapshotJSON is a snapshot and its stored JSON, made with one encoding
// of the content (a 500-node plan costs about a millisecond per pass).
func snapshotJSON(p *Plan, parent string) (*PlanRevision, []byte, error) {
	c := ContentOf(p)
	content, digest := c.canonical()
	snap := &PlanRevision{PlanID: p.ID, Revision: p.Revision, Digest: digest, Parent: parent, RevisionContent: c, Source: p.Revised}
	head, err := json.Marshal(struct {
		PlanID   string `json:"plan_id"`
		Revision int    `json:"revision"`
		Digest   string `json:"digest"`
		Parent   string `json:"parent,omitempty"`
	}{snap.PlanID, snap.Revision, digest, parent})
	if err != nil {
		return nil, nil, err
	}
	source, err := json.Marshal(snap.Source)
	if err != nil {
		return nil, nil, err
	}
	out := make([]byte, 0, len(head)+len(content)+len(source)+16)
	out = append(out, head[:len(head)-1]...)
	out = append(out, ',')
	out = append(out, content[1:len(content)-1]...)
	out = append(out, `,"source":`...)
	out = append(out, source...)
	return snap, append(out, '}'), nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func digestOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // only JSON values reach here: plans are decoded from JSON or built from it
		panic("capstan: digest of a value that is not JSON: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Snapshot returns the revision snapshot of a plan's current content,
// made from the revision whose digest is parent ("" for the first).
func Snapshot(p *Plan, parent string) *PlanRevision {
	c := ContentOf(p)
	return &PlanRevision{PlanID: p.ID, Revision: p.Revision, Digest: c.Digest(), Parent: parent, RevisionContent: c, Source: p.Revised}
}

// Plan returns the revision as a plan: the record's identity and status
// with the revision's content.
func (r *PlanRevision) Plan(record *Plan) *Plan {
	p := *record
	p.Revision, p.Digest = r.Revision, r.Digest
	p.ScenarioRef, p.Nodes, p.Edges, p.Bindings, p.Parameters = r.ScenarioRef, r.Nodes, r.Edges, r.Bindings, r.Parameters
	p.Revised = r.Source
	return &p
}

// UpstreamDigest is the digest of what an approver of a gate sees: the
// gate, every node it waits for (transitively, through edges and the
// stages that contain them), the edges among them, the bindings they
// consume and the plan's parameters. A change to any of them changes it.
func UpstreamDigest(p *Plan, gate string) string {
	edges := AllEdges(p.Nodes, p.Edges)
	byID := map[string]*PlanNode{}
	parent := map[string]string{}
	for i := range p.Nodes {
		byID[p.Nodes[i].ID] = &p.Nodes[i]
		for _, c := range p.Nodes[i].Children {
			parent[c] = p.Nodes[i].ID
		}
	}
	into := map[string][]string{}
	for _, e := range edges {
		into[e.To] = append(into[e.To], e.From)
	}
	seen := map[string]bool{}
	var walk func(string)
	walk = func(id string) {
		if seen[id] || byID[id] == nil {
			return
		}
		seen[id] = true
		for _, f := range into[id] {
			walk(f)
		}
		if pa := parent[id]; pa != "" {
			for _, f := range into[pa] {
				walk(f)
			}
		}
		for _, c := range byID[id].Children {
			walk(c)
		}
	}
	walk(gate)
	var c RevisionContent
	c.ScenarioRef, c.Parameters = p.ScenarioRef, p.Parameters
	reqs := map[string]bool{}
	for _, n := range p.Nodes {
		if seen[n.ID] {
			c.Nodes = append(c.Nodes, n)
			for _, r := range n.Requires {
				reqs[r] = true
			}
		}
	}
	for _, e := range edges {
		if seen[e.From] && seen[e.To] {
			c.Edges = append(c.Edges, e)
		}
	}
	sort.Slice(c.Edges, func(i, j int) bool {
		return c.Edges[i].From < c.Edges[j].From || (c.Edges[i].From == c.Edges[j].From && c.Edges[i].To < c.Edges[j].To)
	})
	for _, b := range p.Bindings {
		if reqs[b.ID] {
			c.Bindings = append(c.Bindings, b)
		}
	}
	slices.SortFunc(c.Nodes, func(a, b PlanNode) int { return cmp.Compare(a.ID, b.ID) })
	return c.Digest()
}

// RevisionWrite is what a store does with a plan it writes: the snapshot
// to store with it and its JSON (nil when its revision has one: revisions
// never change), or the error that refuses the write. stored is the plan
// as stored (nil for a new plan); existing is the stored snapshot of p's
// revision (nil when none).
func RevisionWrite(stored, p *Plan, existing *PlanRevision) (*PlanRevision, []byte, error) {
	if existing != nil {
		if p.Digest != "" && p.Digest != existing.Digest {
			return nil, nil, Errorf(EINVALID, "%s revision %d is %s and never changes; this write carries %s", Named("plan", p.ID), p.Revision, existing.Digest, p.Digest)
		}
		return nil, nil, nil
	}
	parent := ""
	switch {
	case stored == nil && p.Revision != 1:
		return nil, nil, Errorf(EINVALID, "a new plan starts at revision 1, not %d", p.Revision)
	case stored != nil && p.Revision != stored.Revision+1 && p.Revision != stored.Revision:
		return nil, nil, Errorf(EINVALID, "%s is at revision %d: the next is %d, not %d", Named("plan", p.ID), stored.Revision, stored.Revision+1, p.Revision)
	case stored != nil && p.Revision == stored.Revision+1:
		parent = stored.Digest
	}
	snap, data, err := snapshotJSON(p, parent)
	if err != nil {
		return nil, nil, Wrap("capstan.RevisionWrite", err)
	}
	if p.Digest != "" && p.Digest != snap.Digest {
		return nil, nil, Errorf(EINVALID, "%s revision %d carries digest %s but its content's is %s", Named("plan", p.ID), p.Revision, p.Digest, snap.Digest)
	}
	return snap, data, nil
}
