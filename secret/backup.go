package secret

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/capstan-dev/capstan"
)

// A backup carries secrets still sealed: each record is a secret's
// sealed values, newest first (SealedValue), bound by their additional
// data to their organization and name, so they open only with the key
// that sealed them, in that organization, under that name.

// Sealed is every secret record of org, by name: what a backup of the
// embedded store carries (on Neo4j the database's dump carries them).
func (s *FileStore) Sealed(org string) map[string][]SealedValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]SealedValue, len(s.file.Secrets[org]))
	for name, sealed := range s.file.Secrets[org] {
		values := []SealedValue{{Nonce: sealed.Nonce, Ciphertext: sealed.Ciphertext, UpdatedAt: sealed.UpdatedAt}}
		for _, p := range sealed.Previous {
			values = append(values, SealedValue{Nonce: p.Nonce, Ciphertext: p.Ciphertext, UpdatedAt: p.UpdatedAt})
		}
		out[name] = values
	}
	return out
}

// SealedRecords emits org's secret records as backup records, by name.
func (s *FileStore) SealedRecords(org string, emit func(capstan.BackupRecord) error) error {
	sealed := s.Sealed(org)
	names := make([]string, 0, len(sealed))
	for name := range sealed {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := json.Marshal(sealed[name])
		if err != nil {
			return err
		}
		if err := emit(capstan.BackupRecord{Kind: capstan.BackupSecret, Key: name, Data: data}); err != nil {
			return err
		}
	}
	return nil
}

// CheckRestore refuses (ECONFLICT) to restore secrets into an
// organization that has some already.
func (s *FileStore) CheckRestore(_ context.Context, org string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.file.Secrets[org]) > 0 {
		return capstan.Errorf(capstan.ECONFLICT, "the secret store already holds secrets of organization %s", org)
	}
	return nil
}

// PutSealed stores org's restored records in one write of the file; each
// must open with this store's key.
func (s *FileStore) PutSealed(_ context.Context, org string, records map[string]json.RawMessage) error {
	byName := map[string]sealedSecret{}
	for name, data := range records {
		values, err := decodeRecord(name, data)
		if err != nil {
			return err
		}
		one := sealedSecret{Nonce: values[0].Nonce, Ciphertext: values[0].Ciphertext, UpdatedAt: values[0].UpdatedAt}
		for _, v := range values[1:min(len(values), keptPrevious+1)] {
			one.Previous = append(one.Previous, sealedSecret{Nonce: v.Nonce, Ciphertext: v.Ciphertext, UpdatedAt: v.UpdatedAt})
		}
		for _, v := range append([]sealedSecret{one}, one.Previous...) {
			if _, err := s.open(org, name, v); err != nil {
				return keyMismatch(org, name)
			}
		}
		byName[name] = one
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.file.Secrets[org]) > 0 {
		return capstan.Errorf(capstan.ECONFLICT, "the secret store already holds secrets of organization %s", org)
	}
	s.file.Secrets[org] = byName
	if err := s.write(); err != nil {
		delete(s.file.Secrets, org)
		return capstan.Wrap("secret.PutSealed", err)
	}
	return nil
}

// OpensRecord reports whether key opens every value of a backup's
// secret record: a restore's check, before it writes anything, that it
// was given the key of the server the backup was taken from, and that
// each value is sealed for this organization and name (a store whose
// values do not all open cannot mask them: its servers refuse to start).
func OpensRecord(key []byte, org, name string, data json.RawMessage) error {
	values, err := decodeRecord(name, data)
	if err != nil {
		return err
	}
	if len(values) > keptPrevious+1 {
		return capstan.Errorf(capstan.EINVALID, "the backup's record of secret %q holds %d values, more than a store keeps (%d)", name, len(values), keptPrevious+1)
	}
	aead, err := newAEAD(key)
	if err != nil {
		return err
	}
	for _, v := range values {
		if _, err := aead.Open(nil, v.Nonce, v.Ciphertext, additional(org, name)); err != nil {
			return keyMismatch(org, name)
		}
	}
	return nil
}

func decodeRecord(name string, data json.RawMessage) ([]SealedValue, error) {
	var values []SealedValue
	if err := json.Unmarshal(data, &values); err != nil || len(values) == 0 || !ValidName(name) {
		return nil, capstan.Errorf(capstan.EINVALID, "the backup's record of secret %q is not a list of sealed values", name)
	}
	return values, nil
}

func keyMismatch(org, name string) error {
	return capstan.Errorf(capstan.EINVALID, "the backup's secret %s/%s does not open with this secret key: restore with the key of the server that took the backup (CAPSTAN_SECRET_KEY or --secret-key-file)", org, name)
}
