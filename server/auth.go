package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/capstan-dev/capstan"
)

// Token is one entry of the tokens file.
type Token struct {
	Token        string   `yaml:"token" json:"token"`
	Actor        string   `yaml:"actor" json:"actor"`
	Organization string   `yaml:"organization" json:"organization"`
	Roles        []string `yaml:"roles" json:"roles"`
	// ExpiresAt, when set, ends the token: requests are refused and open
	// WebSocket connections are closed after it.
	ExpiresAt time.Time `yaml:"expires_at" json:"expires_at"`
}

// Tokens maps bearer tokens to actors. Tokens are kept only as SHA-256
// digests, so a heap dump does not reveal them. The table can be replaced
// while the server runs (Replace), e.g. after the tokens file changed.
type Tokens struct {
	table atomic.Pointer[tokenTable]
}

type tokenTable struct {
	byDigest map[[32]byte]*capstan.Actor
	expires  map[[32]byte]time.Time
}

// NewTokens builds the token table, rejecting incomplete or duplicate
// entries and roles other than the built-in ones and extraRoles.
func NewTokens(entries []Token, extraRoles ...string) (*Tokens, error) {
	tbl, err := newTable(entries, extraRoles)
	t := &Tokens{}
	t.table.Store(tbl)
	return t, err
}

// Replace swaps in a new token table; connections whose token is gone
// are closed at their next check.
func (t *Tokens) Replace(from *Tokens) {
	t.table.Store(from.table.Load())
}

func newTable(entries []Token, extraRoles []string) (*tokenTable, error) {
	t := &tokenTable{byDigest: map[[32]byte]*capstan.Actor{}, expires: map[[32]byte]time.Time{}}
	var p capstan.Problems
	known := map[string]bool{}
	for _, r := range capstan.BuiltinRoles {
		known[r] = true
	}
	for _, r := range extraRoles {
		if !capstan.ValidKey(r) {
			p.Addf("roles: %q is not a valid role name", r)
		}
		known[r] = true
	}
	for i, e := range entries {
		for _, r := range e.Roles {
			if !known[r] {
				p.Addf("entry %d: unknown role %q (built-in: %s; declare others under roles:)", i+1, r, strings.Join(capstan.BuiltinRoles, ", "))
			}
		}
		switch {
		case len(e.Token) < 16:
			p.Addf("entry %d: token must be at least 16 characters", i+1)
			continue
		case capstan.CheckPersonActor(e.Actor) != nil:
			p.Addf("entry %d: %v", i+1, capstan.CheckPersonActor(e.Actor))
			continue
		case !capstan.ValidKey(e.Organization):
			p.Addf("entry %d: organization %q is not a valid key", i+1, e.Organization)
			continue
		}
		d := sha256.Sum256([]byte(e.Token))
		if t.byDigest[d] != nil {
			p.Addf("entry %d: token is used twice", i+1)
			continue
		}
		t.byDigest[d] = &capstan.Actor{ID: e.Actor, OrganizationID: e.Organization, Roles: e.Roles}
		if !e.ExpiresAt.IsZero() {
			t.expires[d] = e.ExpiresAt
		}
	}
	return t, p.Err("tokens")
}

// LoadTokens reads a tokens file: YAML or JSON, {roles: [extra role
// names], tokens: [{token, actor, organization, roles, expires_at}]}.
// Unknown keys and undeclared roles are errors: a typo must not quietly
// grant less, or more, than meant.
func LoadTokens(path string) (*Tokens, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "tokens file: %v", err)
	}
	var f struct {
		Roles  []string `yaml:"roles"`
		Tokens []Token  `yaml:"tokens"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, capstan.Errorf(capstan.EINVALID, "tokens file %s: %v", path, err)
	}
	return NewTokens(f.Tokens, f.Roles...)
}

// Lookup returns the actor of a valid (known, unexpired) token, or nil.
func (t *Tokens) Lookup(token string) *capstan.Actor {
	if t == nil || token == "" {
		return nil
	}
	tbl := t.table.Load()
	d := sha256.Sum256([]byte(token))
	if exp, ok := tbl.expires[d]; ok && !time.Now().Before(exp) {
		return nil
	}
	return tbl.byDigest[d]
}

// Organizations lists the organizations the tokens belong to.
func (t *Tokens) Organizations() []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range t.table.Load().byDigest {
		if !seen[a.OrganizationID] {
			seen[a.OrganizationID] = true
			out = append(out, a.OrganizationID)
		}
	}
	return out
}

// bearerToken is the token of an Authorization header value; the scheme
// is case-insensitive (RFC 9110 §11.1): "bearer x" is "Bearer x".
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return token, true
}

// Authenticate lets a request through only with a valid bearer token and
// puts its actor in the context. No other request reaches a resolver.
func (t *Tokens) Authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearerToken(r.Header.Get("Authorization"))
		a := t.Lookup(strings.TrimSpace(token))
		if !ok || a == nil {
			writeError(w, http.StatusUnauthorized, capstan.EUNAUTHENTICATED, "missing or invalid bearer token")
			return
		}
		next.ServeHTTP(w, r.WithContext(capstan.WithActor(r.Context(), a)))
	})
}

// writeError writes a GraphQL-shaped error response.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="capstan"`)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"errors": []map[string]any{{"message": msg, "extensions": map[string]any{"code": code}}},
	})
}
