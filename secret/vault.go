package secret

import (
	"context"
	"sync"
)

// Vault is a Store with a redactor per organization, rebuilt when one of
// its values changes, and one over every organization seen (for logs).
type Vault struct {
	Store
	mu     sync.Mutex
	byOrg  map[string]*Redactor
	values map[string][][]byte // of the organizations in byOrg, for all
	all    *Redactor
}

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
	if r, ok := v.byOrg[org]; ok {
		return r, nil
	}
	values, err := v.Store.Values(ctx, org)
	if err != nil {
		return nil, err
	}
	r := NewRedactor(values)
	v.byOrg[org], v.values[org] = r, values
	var all [][]byte
	for _, vals := range v.values {
		all = append(all, vals...)
	}
	v.all = NewRedactor(all)
	return r, nil
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
