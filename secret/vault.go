package secret

import (
	"context"
	"sync"
	"time"
)

// Vault is a Store with a redactor per organization, rebuilt when one of
// its values changes, and one over every organization seen (for logs).
type Vault struct {
	Store
	mu     sync.Mutex
	byOrg  map[string]*Redactor
	values map[string][][]byte // of the organizations in byOrg, for all
	all    *Redactor
	// gens are the generations the redactors were built at, and when
	// each was last checked, for a Store that others change too
	// (Generational: the database replicas share).
	gens map[string]generation
}

// Generational is a Store that other processes change too: its
// generation for an organization moves with every change of its secrets.
type Generational interface {
	Generation(ctx context.Context, org string) (int64, error)
}

type generation struct {
	gen     int64
	checked time.Time
}

// RecheckEvery is how often a vault over a Generational store asks
// whether another replica changed an organization's secrets: a value put
// through another replica is masked here at most this long after.
const RecheckEvery = time.Second

// NewVault wraps a store.
func NewVault(s Store) *Vault {
	return &Vault{Store: s, byOrg: map[string]*Redactor{}, values: map[string][][]byte{}}
}

// Put stores a value and starts masking it at once.
func (v *Vault) Put(ctx context.Context, org, name string, value []byte) error {
	if err := v.Store.Put(ctx, org, name, value); err != nil {
		return err
	}
	v.mu.Lock()
	delete(v.byOrg, org)
	delete(v.values, org)
	v.mu.Unlock()
	_, err := v.Redactor(ctx, org)
	return err
}

// Redactor masks every secret value of an organization: every value an
// operation of it can reach. It is built under the vault's lock, so a Put
// that lands meanwhile invalidates it only after it is stored, never
// before (a stale redactor never outlives a Put).
func (v *Vault) Redactor(ctx context.Context, org string) (*Redactor, error) {
	if v == nil {
		return nil, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	gen, fresh, err := v.generation(ctx, org)
	if r, ok := v.byOrg[org]; ok && (fresh || err != nil) {
		// A failed check keeps the redactor it has: it masks every value
		// known so far, and nil would mask nothing.
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	values, err := v.Store.Values(ctx, org)
	if err != nil {
		return nil, err
	}
	r := NewRedactor(values)
	v.byOrg[org], v.values[org] = r, values
	if v.gens != nil {
		v.gens[org] = generation{gen: gen, checked: time.Now()}
	}
	var all [][]byte
	for _, vals := range v.values {
		all = append(all, vals...)
	}
	v.all = NewRedactor(all)
	return r, nil
}

// generation reports whether the redactor of org (if any) is still
// fresh: always for a store only this process changes; for a Generational
// one, when its generation has not moved (asked at most every
// RecheckEvery). v.mu is held.
func (v *Vault) generation(ctx context.Context, org string) (int64, bool, error) {
	g, ok := v.Store.(Generational)
	if !ok {
		return 0, true, nil
	}
	if v.gens == nil {
		v.gens = map[string]generation{}
	}
	known, seen := v.gens[org]
	if seen && time.Since(known.checked) < RecheckEvery {
		return known.gen, true, nil
	}
	gen, err := g.Generation(ctx, org)
	if err != nil {
		return 0, false, err
	}
	if seen && gen == known.gen {
		v.gens[org] = generation{gen: gen, checked: time.Now()}
		return gen, true, nil
	}
	return gen, false, nil
}

// All masks the values of every organization loaded so far (logs).
func (v *Vault) All() *Redactor {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.all
}
