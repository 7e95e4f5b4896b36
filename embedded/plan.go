package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/capstan-dev/capstan"
)

// CreatePlan stores a new plan and the updated intent atomically.
func (s *Store) CreatePlan(ctx context.Context, org string, p *capstan.Plan, i *capstan.Intent, replaced *capstan.Plan) error {
	if err := capstan.CheckCreatePlan(org, p, i, replaced); err != nil {
		return err
	}
	var rm, m capstan.Meta
	var i2 capstan.Intent
	var digest string
	err := s.update(ctx, "embedded.CreatePlan", func(w *writer) (err error) {
		if replaced != nil {
			if rm, err = s.putPlan(w, org, replaced); err != nil {
				return err
			}
		}
		m = p.Meta
		s.touch(&m, org, true)
		c := *p
		c.Meta = m
		c.IntentID = i.ID
		i2 = *i
		i2.LatestPlanID = m.ID
		im, err := s.putIntent(w, org, &i2)
		if err != nil {
			return err
		}
		i2.Meta = im
		if err := s.putRevision(w, org, nil, &c); err != nil {
			return err
		}
		digest = c.Digest
		if err := w.putJSON(bPlans, key(org, m.ID), &c); err != nil {
			return err
		}
		if err := indexProviders(w, org, &c); err != nil {
			return err
		}
		return w.put(bIntentPlans, key(org, i.ID, m.ID), nil)
	})
	if err != nil {
		return err
	}
	p.Meta, p.IntentID, p.Digest = m, i.ID, digest
	*i = i2
	if replaced != nil {
		replaced.Meta = rm
	}
	return nil
}

// UpdatePlan writes p (and i, when given) when their versions are current.
func (s *Store) UpdatePlan(ctx context.Context, org string, p *capstan.Plan, i *capstan.Intent) error {
	if err := capstan.CheckUpdatePlan(org, p, i); err != nil {
		return err
	}
	var pm, im capstan.Meta
	err := s.update(ctx, "embedded.UpdatePlan", func(w *writer) (err error) {
		if i != nil {
			if im, err = s.putIntent(w, org, i); err != nil {
				return err
			}
		}
		pm, err = s.putPlan(w, org, p)
		return err
	})
	if err != nil {
		return err
	}
	p.Meta = pm
	if i != nil {
		i.Meta = im
	}
	return nil
}

// putPlan writes p inside tx after checking its version and returns its
// new Meta; p is left as it was until the caller's commit succeeds.
func (s *Store) putPlan(w *writer, org string, p *capstan.Plan) (capstan.Meta, error) {
	tx := w.tx
	var old struct { // only what is checked: a large plan decodes fast
		capstan.Meta
		IntentID string `json:"intent_id"`
		Revision int    `json:"revision"`
		Digest   string `json:"digest"`
	}
	ok, err := getJSON(tx.Bucket(bPlans), key(org, p.ID), &old)
	if err != nil {
		return capstan.Meta{}, err
	}
	if !ok {
		return capstan.Meta{}, capstan.NotFound("plan", p.ID)
	}
	if old.Version != p.Version {
		return capstan.Meta{}, capstan.StaleVersion("plan", p.ID, old.Version, p.Version)
	}
	if old.IntentID != p.IntentID {
		return capstan.Meta{}, capstan.Errorf(capstan.EINVALID, "a plan cannot move to another intent")
	}
	m := p.Meta
	m.CreatedAt = old.CreatedAt
	s.touch(&m, org, false)
	c := *p
	c.Meta = m
	if err := s.putRevision(w, org, &capstan.Plan{Meta: old.Meta, Revision: old.Revision, Digest: old.Digest}, &c); err != nil {
		return capstan.Meta{}, err
	}
	if err := indexProviders(w, org, &c); err != nil {
		return capstan.Meta{}, err
	}
	return m, w.putJSON(bPlans, key(org, p.ID), &c)
}

func revisionKey(org, planID string, rev int) []byte {
	return key(org, planID, fmt.Sprintf("%08d", rev))
}

// putRevision stores the snapshot of p's revision when it has none, and
// sets p's digest to its revision's.
func (s *Store) putRevision(w *writer, org string, stored, p *capstan.Plan) error {
	k := revisionKey(org, p.ID, p.Revision)
	snap, data, err := capstan.PlanRevisionWrite(stored, p, w.tx.Bucket(bRevisions).Get(k) != nil)
	if err != nil || snap == nil {
		return err
	}
	return w.put(bRevisions, k, data)
}

// GetPlanRevision returns one revision of a plan.
func (s *Store) GetPlanRevision(ctx context.Context, org, planID string, revision int) (*capstan.PlanRevision, error) {
	var r capstan.PlanRevision
	var ok bool
	err := s.view(ctx, "embedded.GetPlanRevision", func(tx *rtx) (err error) {
		ok, err = getJSON(tx.Bucket(bRevisions), revisionKey(org, planID, revision), &r)
		return err
	})
	if err == nil && !ok {
		err = capstan.Errorf(capstan.ENOTFOUND, "%s has no revision %d", capstan.Named("plan", planID), revision)
	}
	return &r, err
}

// ListPlanRevisions returns every revision of a plan, oldest first.
func (s *Store) ListPlanRevisions(ctx context.Context, org, planID string) ([]*capstan.PlanRevision, error) {
	var out []*capstan.PlanRevision
	err := s.view(ctx, "embedded.ListPlanRevisions", func(tx *rtx) error {
		return scan(tx.Bucket(bRevisions), prefix(org, planID), nil, func(_, v []byte) (bool, error) {
			var r capstan.PlanRevision
			if err := json.Unmarshal(v, &r); err != nil {
				return false, err
			}
			out = append(out, &r)
			return true, nil
		})
	})
	return out, err
}

// GetPlan returns a plan by id.
func (s *Store) GetPlan(ctx context.Context, org, id string) (*capstan.Plan, error) {
	var p capstan.Plan
	var ok bool
	err := s.view(ctx, "embedded.GetPlan", func(tx *rtx) (err error) {
		ok, err = getJSON(tx.Bucket(bPlans), key(org, id), &p)
		return err
	})
	if err == nil && !ok {
		err = capstan.NotFound("plan", id)
	}
	return &p, err
}

// ListPlans returns the plans of an intent, oldest first.
func (s *Store) ListPlans(ctx context.Context, org, intentID string) ([]*capstan.Plan, error) {
	var out []*capstan.Plan
	err := s.view(ctx, "embedded.ListPlans", func(tx *rtx) error {
		return scan(tx.Bucket(bIntentPlans), prefix(org, intentID), nil, func(k, _ []byte) (bool, error) {
			var p capstan.Plan
			ok, err := getJSON(tx.Bucket(bPlans), key(org, lastPart(k)), &p)
			if ok {
				out = append(out, &p)
			}
			return err == nil, err
		})
	})
	return out, err
}

// ListProviderBindings reads the bindings whose provider is resourceID
// from the provider index (providerindex.go), newest plan first.
func (s *Store) ListProviderBindings(ctx context.Context, org, resourceID string, limit int) ([]capstan.ProviderBinding, error) {
	limit = capstan.LimitOr(limit, 100)
	var out []capstan.ProviderBinding
	err := s.view(ctx, "embedded.ListProviderBindings", func(tx *rtx) error {
		// Newest plan first: plan ids sort by time, so the index is read
		// backwards from the end of the resource's range.
		p := prefix(org, resourceID)
		c := tx.Bucket(bProviderBindings).Cursor()
		k, _ := c.Seek(append(bytes.Clone(p), 0xff))
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		var group []capstan.ProviderBinding // one plan's bindings, in key order
		flush := func() {
			slices.Reverse(group)
			out = append(out, group...)
			group = group[:0]
		}
		for ; k != nil && bytes.HasPrefix(k, p) && len(out) < limit; k, _ = c.Prev() {
			plan, binding, _ := strings.Cut(string(k[len(p):]), "\x00")
			if len(group) > 0 && group[0].PlanID != plan {
				flush()
			}
			group = append(group, capstan.ProviderBinding{PlanID: plan, Binding: binding})
		}
		flush()
		return nil
	})
	return out[:min(len(out), limit)], err
}
