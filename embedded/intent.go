package embedded

import (
	"context"
	"encoding/json"

	"github.com/capstan-dev/capstan"
)

// CreateIntent stores a new intent.
func (s *Store) CreateIntent(ctx context.Context, org string, i *capstan.Intent) error {
	if err := capstan.CheckIntentWrite(org, i); err != nil {
		return err
	}
	var m capstan.Meta
	err := s.update(ctx, "embedded.CreateIntent", func(w *writer) error {
		m = i.Meta
		s.touch(&m, org, true)
		c := *i
		c.Meta = m
		return w.putJSON(bIntents, key(org, m.ID), &c)
	})
	if err == nil {
		i.Meta = m
	}
	return err
}

// UpdateIntent writes i when its version is current.
func (s *Store) UpdateIntent(ctx context.Context, org string, i *capstan.Intent) error {
	if err := capstan.CheckIntentWrite(org, i); err != nil {
		return err
	}
	var m capstan.Meta
	err := s.update(ctx, "embedded.UpdateIntent", func(w *writer) (err error) {
		m, err = s.putIntent(w, org, i)
		return err
	})
	if err == nil {
		i.Meta = m
	}
	return err
}

// putIntent writes i inside tx after checking its version and returns
// its new Meta; i is left as it was until the caller's commit succeeds.
func (s *Store) putIntent(w *writer, org string, i *capstan.Intent) (capstan.Meta, error) {
	var old capstan.Intent
	ok, err := getJSON(w.tx.Bucket(bIntents), key(org, i.ID), &old)
	if err != nil {
		return capstan.Meta{}, err
	}
	if !ok {
		return capstan.Meta{}, capstan.NotFound("intent", i.ID)
	}
	if old.Version != i.Version {
		return capstan.Meta{}, capstan.StaleVersion("intent", i.ID, old.Version, i.Version)
	}
	m := i.Meta
	m.CreatedAt = old.CreatedAt
	s.touch(&m, org, false)
	c := *i
	c.Meta = m
	return m, w.putJSON(bIntents, key(org, i.ID), &c)
}

// GetIntent returns an intent by id.
func (s *Store) GetIntent(ctx context.Context, org, id string) (*capstan.Intent, error) {
	var i capstan.Intent
	var ok bool
	err := s.view(ctx, "embedded.GetIntent", func(tx *rtx) (err error) {
		ok, err = getJSON(tx.Bucket(bIntents), key(org, id), &i)
		return err
	})
	if err == nil && !ok {
		err = capstan.NotFound("intent", id)
	}
	return &i, err
}

// ListIntents returns a page of intents, newest id last.
func (s *Store) ListIntents(ctx context.Context, org string, f capstan.IntentFilter) ([]*capstan.Intent, int, error) {
	var out []*capstan.Intent
	total := 0
	limit := capstan.LimitOr(f.Limit, 100)
	err := s.view(ctx, "embedded.ListIntents", func(tx *rtx) error {
		return scan(tx.Bucket(bIntents), prefix(org), nil, func(k, v []byte) (bool, error) {
			var i capstan.Intent
			if err := json.Unmarshal(v, &i); err != nil {
				return false, err
			}
			if f.Status != "" && i.Status != f.Status {
				return true, nil
			}
			total++
			if (f.After == "" || i.ID > f.After) && len(out) < limit {
				out = append(out, &i)
			}
			return true, nil
		})
	})
	return out, total, err
}
