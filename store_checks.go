package capstan

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
