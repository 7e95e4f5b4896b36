package backup

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/capstan-dev/capstan"
)

// MaxSecrets bounds the secret records of one backup (a restore keeps
// them in memory to check each against the key).
const MaxSecrets = 10_000

// checker holds one backup to its rules, record by record and, at the
// end, as a whole: every record of the manifest's organization, every
// reference to something in the backup. Write runs it over what a dump
// read (a dump that saw a write half-way is taken again: Neo4j's read
// transactions are read-committed, not snapshots), and every reader runs
// it over a file, so a crafted file is refused before a store sees it.
type checker struct {
	org                               string
	resources                         map[string]bool // keys
	resourceIDs, intents, plans, ops  map[string]bool
	targets, planIntents, revisionsOf []string
	opPlans, recordOps, patchOps      []string
	secrets                           int
}

func newChecker(org string) *checker {
	return &checker{org: org, resources: map[string]bool{}, resourceIDs: map[string]bool{}, intents: map[string]bool{},
		plans: map[string]bool{}, ops: map[string]bool{}}
}

// ownedKinds are the records that say their organization (capstan.Meta):
// each must say the backup's; one that says none would be stored as no
// organization's.
var ownedKinds = map[string]bool{capstan.BackupResource: true, capstan.BackupIntent: true, capstan.BackupPlan: true,
	capstan.BackupOperation: true, capstan.BackupArtifact: true, capstan.BackupEvidence: true, capstan.BackupGate: true,
	capstan.BackupIntervention: true, capstan.BackupPlanPatch: true}

// identity is what every record's JSON may say of where it belongs.
type identity struct {
	ID             string `json:"id"`
	OrganizationID string `json:"organization_id"`
	OperationID    string `json:"operation_id"`
	Sequence       int64  `json:"sequence"`
	IntentID       string `json:"intent_id"`
	PlanID         string `json:"plan_id"`
}

// add checks one record and notes what it holds and refers to.
func (c *checker) add(r capstan.BackupRecord) error {
	if !capstan.ValidKind(r.Kind) {
		return fmt.Errorf("a record of unknown kind %q", r.Kind)
	}
	var id identity
	if r.Kind != capstan.BackupSecret {
		if err := json.Unmarshal(r.Data, &id); err != nil {
			return fmt.Errorf("a %s record is not a JSON object: %v", r.Kind, err)
		}
		switch {
		case ownedKinds[r.Kind] && id.OrganizationID == "":
			return fmt.Errorf("a %s record without an organization in a backup of %q", r.Kind, c.org)
		case id.OrganizationID != "" && id.OrganizationID != c.org:
			return fmt.Errorf("a %s record of organization %q in a backup of %q", r.Kind, id.OrganizationID, c.org)
		}
	}
	switch r.Kind {
	case capstan.BackupPack: // installed again on restore, checked by the store's own writer
	case capstan.BackupResource:
		var res capstan.Resource
		if err := json.Unmarshal(r.Data, &res); err != nil {
			return err
		}
		if err := res.Validate(); err != nil {
			return fmt.Errorf("resource %s: %s", res.Key(), capstan.ErrorMessage(err))
		}
		if res.ID == "" || c.resources[res.Key()] || c.resourceIDs[res.ID] {
			return fmt.Errorf("resource %s has no id, or its key or id appears twice", res.Key())
		}
		c.resources[res.Key()], c.resourceIDs[res.ID] = true, true
		for _, rel := range res.Relationships {
			c.targets = append(c.targets, rel.Target)
		}
	case capstan.BackupIntent:
		c.intents[id.ID] = true
	case capstan.BackupPlan:
		c.plans[id.ID] = true
		c.planIntents = append(c.planIntents, id.IntentID)
	case capstan.BackupPlanRevision:
		c.revisionsOf = append(c.revisionsOf, id.PlanID)
	case capstan.BackupOperation:
		c.ops[id.ID] = true
		c.opPlans = append(c.opPlans, id.PlanID)
	case capstan.BackupPlanPatch:
		c.patchOps = append(c.patchOps, id.OperationID)
	case capstan.BackupEvent:
		if seq, err := strconv.ParseInt(r.Key, 10, 64); err != nil || seq <= 0 || seq != id.Sequence || id.OperationID != r.Operation {
			return fmt.Errorf("an event keyed %s/%s says it is %s/%d", r.Operation, r.Key, id.OperationID, id.Sequence)
		}
		c.recordOps = append(c.recordOps, r.Operation)
	case capstan.BackupSecret:
		if c.secrets++; c.secrets > MaxSecrets {
			return fmt.Errorf("more than %d secrets", MaxSecrets)
		}
	default: // an operation's record
		if id.OperationID != r.Operation || r.Key == "" {
			return fmt.Errorf("a %s record keyed %s/%s says it is of operation %s", r.Kind, r.Operation, r.Key, id.OperationID)
		}
		c.recordOps = append(c.recordOps, r.Operation)
	}
	return nil
}

// done checks every reference once every record is read.
func (c *checker) done() error {
	missing := func(what string, refs []string, have map[string]bool) error {
		for _, ref := range refs {
			if !have[ref] {
				return fmt.Errorf("%s %q is referred to and not in the backup", what, ref)
			}
		}
		return nil
	}
	for _, check := range []struct {
		what string
		refs []string
		have map[string]bool
	}{{"resource", c.targets, c.resources}, {"intent", c.planIntents, c.intents}, {"plan", c.revisionsOf, c.plans},
		{"plan", c.opPlans, c.plans}, {"operation", c.recordOps, c.ops}, {"operation", c.patchOps, c.ops}} {
		if err := missing(check.what, check.refs, check.have); err != nil {
			return err
		}
	}
	return nil
}
