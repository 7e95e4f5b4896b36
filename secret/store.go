// Package secret keeps secret values outside the graph store — encrypted
// at rest with AES-256-GCM — and masks them in every output (Redactor).
// Plans, parameters and artifacts refer to a secret as "secret:<name>".
package secret

import (
	"bytes"
	"context"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/capstan-dev/capstan"
)

// RefPrefix starts a reference to a secret: secret:<name>.
const RefPrefix = "secret:"

// MinValueLen is the shortest secret value: shorter ones would mask
// ordinary words wherever they appear.
const MinValueLen = 8

// MaxValueLen bounds a secret value.
const MaxValueLen = 64 << 10

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._/-]{0,127}$`)

// ValidName reports whether name may name a secret.
func ValidName(name string) bool {
	return namePattern.MatchString(name) && !strings.Contains(name, "..") && !strings.HasSuffix(name, "/")
}

// ParseRef returns the name a "secret:<name>" value refers to.
func ParseRef(v string) (string, bool) {
	name, ok := strings.CutPrefix(v, RefPrefix)
	return name, ok && ValidName(name)
}

// Ref is the reference to a named secret.
func Ref(name string) string { return RefPrefix + name }

// Entry describes a stored secret, never its value.
type Entry struct {
	Name      string
	UpdatedAt time.Time
}

// Store keeps secret values by organization and name.
type Store interface {
	Put(ctx context.Context, org, name string, value []byte) error
	// Get returns a value or an ENOTFOUND error.
	Get(ctx context.Context, org, name string) ([]byte, error)
	List(ctx context.Context, org string) ([]Entry, error)
	// Values returns every value of an organization (for redaction).
	Values(ctx context.Context, org string) ([][]byte, error)
}

// FileStore is the embedded Store: one JSON file (0600) of AES-256-GCM
// sealed values, each bound to its organization and name (additional
// data), rewritten atomically on every change.
type FileStore struct {
	path string
	aead cipher.AEAD
	mu   sync.Mutex
	file storeFile
}

type storeFile struct {
	Version int                                `json:"version"`
	Secrets map[string]map[string]sealedSecret `json:"secrets"`
}

type sealedSecret struct {
	Nonce      []byte    `json:"nonce"`
	Ciphertext []byte    `json:"ciphertext"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Previous are the values this one replaced (the last few): no longer
	// handed out, still masked — they may still be live somewhere.
	Previous []sealedSecret `json:"previous,omitempty"`
}

// keptPrevious is how many replaced values of a secret are still masked.
const keptPrevious = 3

// KeySize is the size of the key: AES-256.
const KeySize = 32

// LoadKey returns the key: base64 in the environment variable envName
// when set, else the key file, made (random, 0600) when missing.
func LoadKey(envName, keyFile string) ([]byte, error) {
	if v := os.Getenv(envName); v != "" {
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
		if err != nil || len(key) != KeySize {
			return nil, fmt.Errorf("%s must be %d bytes in base64", envName, KeySize)
		}
		return key, nil
	}
	data, err := os.ReadFile(keyFile)
	if err == nil {
		key, derr := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
		if derr != nil || len(key) != KeySize {
			return nil, fmt.Errorf("secret key file %s must hold %d bytes in base64", keyFile, KeySize)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, err
	}
	return key, nil
}

// OpenFile opens (or starts) the store at path with key.
func OpenFile(path string, key []byte) (*FileStore, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	s := &FileStore{path: path, aead: aead, file: storeFile{Version: 1, Secrets: map[string]map[string]sealedSecret{}}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, err
	}
	if err := json.Unmarshal(data, &s.file); err != nil {
		return nil, fmt.Errorf("secret store %s: %w", path, err)
	}
	if s.file.Secrets == nil {
		s.file.Secrets = map[string]map[string]sealedSecret{}
	}
	// Every value must open with this key: a wrong key fails now, not at
	// the first job that needs a secret.
	for org, byName := range s.file.Secrets {
		for name, sealed := range byName {
			if _, err := s.open(org, name, sealed); err != nil {
				return nil, fmt.Errorf("secret store %s: %s/%s does not open with this key", path, org, name)
			}
		}
	}
	return s, nil
}

// Path is where the store keeps its file (jobs must not see it).
func (s *FileStore) Path() string { return s.path }

func additional(org, name string) []byte { return []byte(org + "\x00" + name) }

func (s *FileStore) open(org, name string, sealed sealedSecret) ([]byte, error) {
	return s.aead.Open(nil, sealed.Nonce, sealed.Ciphertext, additional(org, name))
}

// Put stores (or replaces) a value.
func (s *FileStore) Put(_ context.Context, org, name string, value []byte) error {
	if err := CheckValue(name, value); err != nil {
		return err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return capstan.Wrap("secret.Put", err)
	}
	sealed := sealedSecret{Nonce: nonce, Ciphertext: s.aead.Seal(nil, nonce, value, additional(org, name)), UpdatedAt: time.Now().UTC()}
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := s.file.Secrets[org]
	if byName == nil {
		byName = map[string]sealedSecret{}
		s.file.Secrets[org] = byName
	}
	prev, had := byName[name]
	if had {
		older := append([]sealedSecret{{Nonce: prev.Nonce, Ciphertext: prev.Ciphertext, UpdatedAt: prev.UpdatedAt}}, prev.Previous...)
		sealed.Previous = older[:min(len(older), keptPrevious)]
	}
	byName[name] = sealed
	if err := s.write(); err != nil {
		if had {
			byName[name] = prev
		} else {
			delete(byName, name)
		}
		return capstan.Wrap("secret.Put", err)
	}
	return nil
}

// CheckValue refuses bad names and values.
func CheckValue(name string, value []byte) error {
	switch {
	case !ValidName(name):
		return capstan.Errorf(capstan.EINVALID, "secret name %q must be lower-case letters, digits and . _ / - (at most 128)", name)
	case len(bytes.TrimSpace(value)) < MinValueLen:
		return capstan.Errorf(capstan.EINVALID, "a secret value must have at least %d bytes besides surrounding spaces", MinValueLen)
	case len(value) > MaxValueLen:
		return capstan.Errorf(capstan.EINVALID, "a secret value must have at most %d bytes", MaxValueLen)
	}
	return nil
}

// write replaces the file atomically: a crash leaves the old or the new.
func (s *FileStore) write() error {
	data, err := json.Marshal(s.file)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".secrets-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}

// Get returns a value.
func (s *FileStore) Get(_ context.Context, org, name string) ([]byte, error) {
	s.mu.Lock()
	sealed, ok := s.file.Secrets[org][name]
	s.mu.Unlock()
	if !ok {
		return nil, capstan.Errorf(capstan.ENOTFOUND, "no secret %q", name)
	}
	v, err := s.open(org, name, sealed)
	if err != nil {
		return nil, capstan.Wrap("secret.Get", err)
	}
	return v, nil
}

// List names an organization's secrets.
func (s *FileStore) List(_ context.Context, org string) ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, 0, len(s.file.Secrets[org]))
	for name, sealed := range s.file.Secrets[org] {
		out = append(out, Entry{Name: name, UpdatedAt: sealed.UpdatedAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Values opens every value of an organization, the replaced ones kept
// for masking included.
func (s *FileStore) Values(_ context.Context, org string) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, 0, len(s.file.Secrets[org]))
	for name, sealed := range s.file.Secrets[org] {
		for _, one := range append([]sealedSecret{sealed}, sealed.Previous...) {
			v, err := s.open(org, name, one)
			if err != nil {
				return nil, capstan.Wrap("secret.Values", err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}
