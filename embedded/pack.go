package embedded

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/capstan-dev/capstan"
)

// InstallPack stores a pack and everything it brings in one transaction.
func (s *Store) InstallPack(ctx context.Context, org string, p *capstan.ScenarioPack) (bool, error) {
	if err := capstan.CheckOrg(org); err != nil {
		return false, err
	}
	if p.Digest == "" {
		return false, capstan.Errorf(capstan.EINVALID, "pack %s has no digest", p.Ref())
	}
	created := false
	defer s.cache.invalidate(org)
	err := s.update(ctx, "embedded.InstallPack", func(w *writer) error {
		tx := w.tx
		created = false // a batch that is committed again runs this again
		var old capstan.ScenarioPack
		ok, err := getJSON(tx.Bucket(bPacks), key(org, p.Ref()), &old)
		if err != nil {
			return err
		}
		if ok {
			if old.Digest != p.Digest {
				return capstan.Errorf(capstan.ECONFLICT, "pack %s is already installed with different content; publish a new version", p.Ref())
			}
			return nil
		}
		caps := tx.Bucket(bCapabilities)
		for _, c := range p.Capabilities {
			var have capstan.CapabilityDefinition
			ok, err := getJSON(caps, key(org, c.Key), &have)
			if err != nil {
				return err
			}
			if ok && !mayReplace(have.Pack, p) && !sameDefinition(have, c) {
				return capstan.Errorf(capstan.ECONFLICT, "capability %s is already defined differently by pack %s", c.Key, have.Pack)
			}
		}
		return s.writePack(w, org, p, &created)
	})
	return created, err
}

// mayReplace reports whether pack p may overwrite a definition brought by
// the pack ref have: only a newer version of the same pack may.
func mayReplace(have string, p *capstan.ScenarioPack) bool {
	id, version := capstan.SplitRef(have)
	return id == p.ID && capstan.CompareSemver(p.Version, version) > 0
}

func sameDefinition(a, b capstan.CapabilityDefinition) bool {
	a.Pack, b.Pack = "", ""
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func (s *Store) writePack(w *writer, org string, p *capstan.ScenarioPack, created *bool) error {
	ref := p.Ref()
	caps, types := w.tx.Bucket(bCapabilities), w.tx.Bucket(bResourceTypes)
	for _, c := range p.Capabilities {
		var have capstan.CapabilityDefinition
		ok, err := getJSON(caps, key(org, c.Key), &have)
		if err != nil {
			return err
		}
		if ok && have.Pack != "" && !mayReplace(have.Pack, p) {
			continue
		}
		c.Pack = ref
		if err := w.putJSON(bCapabilities, key(org, c.Key), c); err != nil {
			return err
		}
	}
	for _, t := range p.ResourceTypes {
		var have capstan.ResourceType
		ok, err := getJSON(types, key(org, t.Key), &have)
		if err != nil {
			return err
		}
		if ok && have.Pack != "" && !mayReplace(have.Pack, p) {
			continue
		}
		t.Pack = ref
		if err := w.putJSON(bResourceTypes, key(org, t.Key), t); err != nil {
			return err
		}
	}
	for _, sc := range p.Scenarios {
		sc.Pack = ref
		if err := w.putJSON(bScenarios, key(org, sc.Ref()), sc); err != nil {
			return err
		}
	}
	for _, pol := range p.Policies {
		pol.Pack = ref
		if err := w.putJSON(bPolicies, key(org, p.ID, pol.ID), pol); err != nil {
			return err
		}
	}
	stored := *p
	stored.OrganizationID = org
	stored.InstalledAt = s.now().UTC()
	*created = true
	return w.putJSON(bPacks, key(org, ref), stored)
}

func listJSON[T any](s *Store, ctx context.Context, op string, bucket []byte, org string) ([]*T, error) {
	var out []*T
	err := s.view(ctx, op, func(tx *rtx) error {
		return scan(tx.Bucket(bucket), prefix(org), nil, func(_, v []byte) (bool, error) {
			var t T
			if err := json.Unmarshal(v, &t); err != nil {
				return false, err
			}
			out = append(out, &t)
			return true, nil
		})
	})
	return out, err
}

// ListPacks returns installed packs ordered by id then version.
func (s *Store) ListPacks(ctx context.Context, org string) ([]*capstan.ScenarioPack, error) {
	packs, err := listJSON[capstan.ScenarioPack](s, ctx, "embedded.ListPacks", bPacks, org)
	capstan.SortPacks(packs)
	return packs, err
}

// ListResourceTypes returns resource types ordered by key.
func (s *Store) ListResourceTypes(ctx context.Context, org string) ([]*capstan.ResourceType, error) {
	return listJSON[capstan.ResourceType](s, ctx, "embedded.ListResourceTypes", bResourceTypes, org)
}

// ListCapabilities returns capability definitions ordered by key.
func (s *Store) ListCapabilities(ctx context.Context, org string) ([]*capstan.CapabilityDefinition, error) {
	return listJSON[capstan.CapabilityDefinition](s, ctx, "embedded.ListCapabilities", bCapabilities, org)
}

// ListPolicies returns every policy of every installed pack.
func (s *Store) ListPolicies(ctx context.Context, org string) ([]*capstan.Policy, error) {
	return listJSON[capstan.Policy](s, ctx, "embedded.ListPolicies", bPolicies, org)
}

// GetCapability returns a capability definition by key.
func (s *Store) GetCapability(ctx context.Context, org, k string) (*capstan.CapabilityDefinition, error) {
	var d capstan.CapabilityDefinition
	var ok bool
	err := s.view(ctx, "embedded.GetCapability", func(tx *rtx) (err error) {
		ok, err = getJSON(tx.Bucket(bCapabilities), key(org, k), &d)
		return err
	})
	if err == nil && !ok {
		err = capstan.NotFound("capability", k)
	}
	return &d, err
}

// ListScenarios returns scenarios ordered by id then version.
func (s *Store) ListScenarios(ctx context.Context, org string, f capstan.ScenarioFilter) ([]*capstan.Scenario, error) {
	all, err := listJSON[capstan.Scenario](s, ctx, "embedded.ListScenarios", bScenarios, org)
	if err != nil {
		return nil, err
	}
	return capstan.SelectScenarios(all, f), nil
}

// GetScenario returns a scenario by id@version, or its newest version.
func (s *Store) GetScenario(ctx context.Context, org, ref string) (*capstan.Scenario, error) {
	if _, version := capstan.SplitRef(ref); version == "" {
		return capstan.NewestScenario(ctx, s, org, ref)
	}
	var sc capstan.Scenario
	var ok bool
	err := s.view(ctx, "embedded.GetScenario", func(tx *rtx) (err error) {
		ok, err = getJSON(tx.Bucket(bScenarios), key(org, ref), &sc)
		return err
	})
	if err == nil && !ok {
		err = capstan.NotFound("scenario", ref)
	}
	return &sc, err
}

// ListPackRefs names the installed packs from the keys alone.
func (s *Store) ListPackRefs(ctx context.Context, org string) ([]string, error) {
	var out []string
	err := s.view(ctx, "embedded.ListPackRefs", func(tx *rtx) error {
		return scan(tx.Bucket(bPacks), prefix(org), nil, func(k, _ []byte) (bool, error) {
			out = append(out, lastPart(k))
			return true, nil
		})
	})
	slices.Sort(out)
	return out, err
}
