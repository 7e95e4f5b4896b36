package capstan

import (
	"cmp"
	"slices"
)

// The checks a store runs at the opening of each write, before its engine
// is touched: written once here, so both stores refuse the same inputs
// with the same errors; each store's method calls the one of its name.

// CheckIntentWrite checks CreateIntent's and UpdateIntent's arguments.
func CheckIntentWrite(org string, i *Intent) error {
	if err := CheckOrg(org); err != nil {
		return err
	}
	return i.Validate()
}

// CheckResourceWrite checks CreateResource's and UpdateResource's.
func CheckResourceWrite(org string, r *Resource) error {
	if err := CheckOrg(org); err != nil {
		return err
	}
	return r.Validate()
}

// CheckImport checks ImportResources': every resource valid and no key
// twice, all the problems in one error.
func CheckImport(org string, rs []*Resource) error {
	if err := CheckOrg(org); err != nil {
		return err
	}
	var p Problems
	seen := make(map[string]bool, len(rs))
	for _, r := range rs {
		if err := r.Validate(); err != nil {
			p = append(p, ErrorDetails(err)...)
		}
		if seen[r.Key()] {
			p.Addf("resource %s appears twice in the import", r.Key())
		}
		seen[r.Key()] = true
	}
	return p.Err("import")
}

// CheckCreatePlan checks CreatePlan's: the plan, its intent and the plan
// it replaces, which must be the intent's.
func CheckCreatePlan(org string, p *Plan, i *Intent, replaced *Plan) error {
	if err := CheckOrg(org); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if err := i.Validate(); err != nil {
		return err
	}
	if replaced == nil {
		return nil
	}
	if replaced.IntentID != i.ID {
		return Errorf(EINVALID, "plan %s is not a plan of intent %s", replaced.ID, i.ID)
	}
	return replaced.Validate()
}

// CheckUpdatePlan checks UpdatePlan's: the plan, and its intent when
// one is given.
func CheckUpdatePlan(org string, p *Plan, i *Intent) error {
	if err := CheckOrg(org); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if i == nil {
		return nil
	}
	if err := i.Validate(); err != nil {
		return err
	}
	if i.ID != p.IntentID {
		return Errorf(EINVALID, "intent %s is not the plan's intent", i.ID)
	}
	return nil
}

// CheckStep checks ApplyOperationChange's.
func CheckStep(org string, ch *OperationChange) error {
	if err := CheckOrg(org); err != nil {
		return err
	}
	return ch.Validate()
}

// CheckCommand checks RecordCommand's arguments, gives the command its
// operation and returns it encoded, as both stores keep it.
func CheckCommand(org, opID string, c *Command) ([]byte, error) {
	if err := CheckOrg(org); err != nil {
		return nil, err
	}
	c.OperationID = opID
	data, err := EncodeCommand(c)
	if err != nil {
		return nil, Wrap("capstan.CheckCommand", err)
	}
	return data, nil
}

// LimitOr is n, or def when n asks for no limit (zero or less).
func LimitOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// Matches reports whether sc is one of the scenarios f selects.
func (f ScenarioFilter) Matches(sc *Scenario) bool {
	return (f.ID == "" || sc.ID == f.ID) && (f.Action == "" || sc.Action == f.Action) &&
		(f.TargetResourceType == "" || sc.TargetResourceType == f.TargetResourceType) &&
		(f.Provides == "" || sc.ProvidesCapability(f.Provides) != nil)
}

// SelectScenarios keeps the scenarios f selects, reusing all's array, in
// the order ListScenarios lists them: by id, then by version, oldest
// first.
func SelectScenarios(all []*Scenario, f ScenarioFilter) []*Scenario {
	out := all[:0]
	for _, sc := range all {
		if f.Matches(sc) {
			out = append(out, sc)
		}
	}
	slices.SortFunc(out, func(a, b *Scenario) int { return compareVersioned(a.ID, a.Version, b.ID, b.Version) })
	return out
}

// SortPacks orders packs as ListPacks lists them: by id, then by
// version, oldest first.
func SortPacks(packs []*ScenarioPack) {
	slices.SortFunc(packs, func(a, b *ScenarioPack) int { return compareVersioned(a.ID, a.Version, b.ID, b.Version) })
}

func compareVersioned(aID, aVersion, bID, bVersion string) int {
	if aID != bID {
		return cmp.Compare(aID, bID)
	}
	return CompareSemver(aVersion, bVersion)
}

// PlanRevisionWrite is the revision part of a plan write, for a store
// that knows whether p's revision has a snapshot stored (exists): it sets
// p's digest to its revision's and returns the snapshot to store with its
// JSON, or nil when the revision has one already (revisions never
// change).
func PlanRevisionWrite(stored, p *Plan, exists bool) (*PlanRevision, []byte, error) {
	var existing *PlanRevision
	if exists { // its digest is the stored plan's: no need to decode the snapshot
		existing = &PlanRevision{Digest: p.Digest}
		if stored != nil && stored.Revision == p.Revision && stored.Digest != "" {
			existing.Digest = stored.Digest
		}
	}
	snap, data, err := RevisionWrite(stored, p, existing)
	if err != nil {
		return nil, nil, err
	}
	if snap == nil {
		p.Digest = existing.Digest
		return nil, nil, nil
	}
	p.Digest = snap.Digest
	return snap, data, nil
}
