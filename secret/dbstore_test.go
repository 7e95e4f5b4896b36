package secret_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/secret"
)

// memRecords is a database's secret records in memory.
type memRecords struct {
	mu   sync.Mutex
	recs map[string]map[string][]secret.SealedValue
	gens map[string]int64
}

func (m *memRecords) PutSecretRecord(_ context.Context, org, name string, v secret.SealedValue, keep int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recs[org] == nil {
		m.recs[org] = map[string][]secret.SealedValue{}
	}
	rec := append([]secret.SealedValue{v}, m.recs[org][name]...)
	m.recs[org][name] = rec[:min(len(rec), keep)]
	m.gens[org]++
	return nil
}

func (m *memRecords) SecretRecord(_ context.Context, org, name string) ([]secret.SealedValue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.recs[org][name], nil
}

func (m *memRecords) SecretRecords(_ context.Context, org string) (map[string][]secret.SealedValue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]secret.SealedValue{}
	for k, v := range m.recs[org] {
		out[k] = v
	}
	return out, nil
}

func (m *memRecords) SecretGeneration(_ context.Context, org string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gens[org], nil
}

func (m *memRecords) AnySecretRecord(context.Context) (string, string, []secret.SealedValue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for org, byName := range m.recs {
		for name, rec := range byName {
			return org, name, rec, nil
		}
	}
	return "", "", nil, nil
}

func key(b byte) []byte {
	k := make([]byte, secret.KeySize)
	for i := range k {
		k[i] = b
	}
	return k
}

// TestReplicasShareSecrets: two replicas' vaults over one database: a
// secret put through one is the other's at once, and masked by the
// other's redactor within RecheckEvery; replaced values stay masked; a
// replica with another key is refused, typed, before any job needs one.
func TestReplicasShareSecrets(t *testing.T) {
	ctx := context.Background()
	db := &memRecords{recs: map[string]map[string][]secret.SealedValue{}, gens: map[string]int64{}}
	a, b := secret.NewVault(secret.NewDB(db, key(1))), secret.NewVault(secret.NewDB(db, key(1)))
	require.NoError(t, b.Store.(*secret.DBStore).CheckKey(ctx), "an empty database takes the first key")
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(secret.NewDB(db, key(3)).CheckKey(ctx)), "the first key is the database's, even with no secret put yet")
	before, err := b.Redactor(ctx, "acme")
	require.NoError(t, err)
	require.True(t, before.Empty())

	require.NoError(t, a.Put(ctx, "acme", "db-password", []byte("first-value-123")))
	got, err := b.Get(ctx, "acme", "db-password")
	require.NoError(t, err)
	require.Equal(t, "first-value-123", string(got), "at once on the other replica")
	require.Eventually(t, func() bool {
		r, err := b.Redactor(ctx, "acme")
		return err == nil && r.String("x first-value-123 y") == "x "+secret.Mask+" y"
	}, 3*secret.RecheckEvery, 50*time.Millisecond)

	require.NoError(t, a.Put(ctx, "acme", "db-password", []byte("second-value-456")))
	require.Eventually(t, func() bool {
		r, _ := b.Redactor(ctx, "acme")
		return r.String("first-value-123 second-value-456") == secret.Mask+" "+secret.Mask
	}, 3*secret.RecheckEvery, 50*time.Millisecond, "the replaced value stays masked")
	list, err := b.List(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, list, 1)

	err = secret.NewDB(db, key(2)).CheckKey(ctx)
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	require.Contains(t, capstan.ErrorMessage(err), "same key")
	_, err = b.Get(ctx, "acme", "missing")
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(a.Put(ctx, "acme", "Bad Name", []byte("long-enough-1"))))
}
