package secret

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"sort"
	"time"

	"github.com/capstan-dev/capstan"
)

// SealedValue is a secret value as stored: AES-256-GCM sealed, bound to
// its organization and name.
type SealedValue struct {
	Nonce      []byte    `json:"nonce"`
	Ciphertext []byte    `json:"ciphertext"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Records is where a DBStore keeps the sealed values: the database every
// replica shares (cypher.Store). A secret's record is its current value
// and the replaced ones still masked, newest first.
type Records interface {
	// PutSecretRecord puts v first in the record of org's secret name,
	// keeping at most keep values, and moves the organization's
	// generation on, in one transaction.
	PutSecretRecord(ctx context.Context, org, name string, v SealedValue, keep int) error
	// SecretRecord is a secret's record (nil when there is none).
	SecretRecord(ctx context.Context, org, name string) ([]SealedValue, error)
	// SecretRecords are every record of an organization, by name.
	SecretRecords(ctx context.Context, org string) (map[string][]SealedValue, error)
	// SecretGeneration changes whenever a secret of org does.
	SecretGeneration(ctx context.Context, org string) (int64, error)
	// AnySecretRecord is some record of any organization (the key check).
	AnySecretRecord(ctx context.Context) (org, name string, values []SealedValue, err error)
}

// DBStore is the Store of replicas: the values sealed here, with the key
// every replica shares (CAPSTAN_SECRET_KEY), kept in the shared database,
// so a secret put through one replica is the others' at once.
type DBStore struct {
	records Records
	aead    cipher.AEAD
}

// keyCheckOrg keeps the value CheckKey seals on a database without
// secrets (no organization is expected to be called so).
const keyCheckOrg = "capstan-key-check"

// NewDB is the store over records with key (a key of KeySize bytes:
// LoadKey's). CheckKey tells whether the key opens what the database
// holds.
func NewDB(records Records, key []byte) *DBStore {
	aead, err := newAEAD(key)
	if err != nil {
		panic(err) // LoadKey gives KeySize bytes
	}
	return &DBStore{records: records, aead: aead}
}

// CheckKey refuses a key that does not open what the database holds (a
// replica started with a key of its own), before any job needs a secret.
//
// On a database that holds no secret yet, it seals a value of its own
// (keyCheckOrg), so that the first replica's key is the one every other
// is checked against even before anyone puts a secret.
func (s *DBStore) CheckKey(ctx context.Context) error {
	org, name, values, err := s.records.AnySecretRecord(ctx)
	if err != nil {
		return err
	}
	if len(values) == 0 {
		check := make([]byte, 24)
		if _, err := rand.Read(check); err != nil {
			return capstan.Wrap("secret.CheckKey", err)
		}
		return s.Put(ctx, keyCheckOrg, "key-check", []byte(base64.RawURLEncoding.EncodeToString(check)))
	}
	if _, err := s.open(org, name, values[0]); err != nil {
		return capstan.Errorf(capstan.EINVALID, "the database's secrets do not open with this secret key: every replica must have the same key (CAPSTAN_SECRET_KEY, or the same --secret-key-file)")
	}
	return nil
}

// CopyMissing puts into to the secrets of org that from has and to has
// not (the file of an earlier version into the database).
func CopyMissing(ctx context.Context, from Store, to Store, org string) error {
	have, err := to.List(ctx, org)
	if err != nil {
		return err
	}
	got := map[string]bool{}
	for _, e := range have {
		got[e.Name] = true
	}
	list, err := from.List(ctx, org)
	if err != nil {
		return err
	}
	for _, e := range list {
		if got[e.Name] {
			continue
		}
		v, err := from.Get(ctx, org, e.Name)
		if err != nil {
			return err
		}
		if err := to.Put(ctx, org, e.Name, v); err != nil {
			return err
		}
	}
	return nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret store key: %w", err)
	}
	return cipher.NewGCM(block)
}

func (s *DBStore) open(org, name string, v SealedValue) ([]byte, error) {
	return s.aead.Open(nil, v.Nonce, v.Ciphertext, additional(org, name))
}

// Put stores (or replaces) a value.
func (s *DBStore) Put(ctx context.Context, org, name string, value []byte) error {
	if err := CheckValue(name, value); err != nil {
		return err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return capstan.Wrap("secret.Put", err)
	}
	v := SealedValue{Nonce: nonce, Ciphertext: s.aead.Seal(nil, nonce, value, additional(org, name)), UpdatedAt: time.Now().UTC()}
	return s.records.PutSecretRecord(ctx, org, name, v, keptPrevious+1)
}

// Get returns a value.
func (s *DBStore) Get(ctx context.Context, org, name string) ([]byte, error) {
	rec, err := s.records.SecretRecord(ctx, org, name)
	if err != nil {
		return nil, err
	}
	if len(rec) == 0 {
		return nil, capstan.Errorf(capstan.ENOTFOUND, "no secret %q", name)
	}
	v, err := s.open(org, name, rec[0])
	if err != nil {
		return nil, capstan.Wrap("secret.Get", err)
	}
	return v, nil
}

// List names an organization's secrets.
func (s *DBStore) List(ctx context.Context, org string) ([]Entry, error) {
	recs, err := s.records.SecretRecords(ctx, org)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(recs))
	for name, rec := range recs {
		if len(rec) > 0 {
			out = append(out, Entry{Name: name, UpdatedAt: rec[0].UpdatedAt})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Values opens every value of an organization, the replaced ones kept
// for masking included.
func (s *DBStore) Values(ctx context.Context, org string) ([][]byte, error) {
	recs, err := s.records.SecretRecords(ctx, org)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for name, rec := range recs {
		for _, sealed := range rec {
			v, err := s.open(org, name, sealed)
			if err != nil {
				return nil, capstan.Wrap("secret.Values", err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// Generation changes whenever a secret of org does, through any replica:
// the vault rebuilds its redactor then (Vault.Redactor).
func (s *DBStore) Generation(ctx context.Context, org string) (int64, error) {
	return s.records.SecretGeneration(ctx, org)
}
