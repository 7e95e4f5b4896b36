package embedded

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// TestMemtableReadsAsOneStore: random writes spread over bbolt, a frozen
// and an active memtable (puts, overwrites, deletions of keys in any of
// them, empty values) read back through rtx exactly as one sorted map
// holding the newest of each: Get, and every cursor walk (Seek then Next,
// Last then Prev, Prev after Next and back), across buckets.
func TestMemtableReadsAsOneStore(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			checkMemtableAgainstModel(t, seed)
		})
	}
}

func checkMemtableAgainstModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	db, err := bolt.Open(filepath.Join(t.TempDir(), "m.db"), 0o600, nil)
	require.NoError(t, err)
	defer db.Close()
	buckets := []string{"a", "b", "c"}
	model := map[string]map[string][]byte{}
	for _, b := range buckets {
		model[b] = map[string][]byte{}
	}
	randKey := func() []byte { return []byte(fmt.Sprintf("k%02d", rng.IntN(40))) }
	write := func(put func(b string, k, v []byte), del func(b string, k []byte), n int) {
		for range n {
			b, k := buckets[rng.IntN(len(buckets))], randKey()
			switch rng.IntN(5) {
			case 0:
				del(b, k)
				delete(model[b], string(k))
			case 1:
				put(b, k, nil)
				model[b][string(k)] = []byte{}
			default:
				v := []byte(fmt.Sprintf("v%d", rng.IntN(1000)))
				put(b, k, v)
				model[b][string(k)] = v
			}
		}
	}
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		for _, b := range buckets {
			if _, err := tx.CreateBucket([]byte(b)); err != nil {
				return err
			}
		}
		write(func(b string, k, v []byte) { require.NoError(t, tx.Bucket([]byte(b)).Put(k, v)) },
			func(b string, k []byte) { require.NoError(t, tx.Bucket([]byte(b)).Delete(k)) }, 60)
		return nil
	}))
	frozen, active := newMemTree(), newMemTree()
	for _, m := range []*memTree{frozen, active} {
		write(func(b string, k, v []byte) { m.Set(memItem{bucket: b, key: k, value: v}) },
			func(b string, k []byte) { m.Set(memItem{bucket: b, key: k, deleted: true}) }, 40)
	}
	tx, err := db.Begin(false)
	require.NoError(t, err)
	defer tx.Rollback()
	r := &rtx{mem: []*memTree{active, frozen}, tx: tx}
	for _, b := range buckets {
		want := sortedKeys(model[b])
		bk := r.Bucket([]byte(b))
		for i := range 40 {
			k := fmt.Sprintf("k%02d", i)
			v, ok := model[b][k]
			got := bk.Get([]byte(k))
			require.Equal(t, ok, got != nil, "Get %s/%s", b, k)
			if ok {
				require.Equal(t, string(v), string(got), "Get %s/%s", b, k)
			}
		}
		var forward []string
		c := bk.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			require.Equal(t, string(model[b][string(k)]), string(v))
			forward = append(forward, string(k))
		}
		require.Equal(t, want, forward, "First/Next of %s", b)
		var backward []string
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			backward = append(backward, string(k))
		}
		require.Equal(t, reversed(want), backward, "Last/Prev of %s", b)
		for range 20 { // a seek anywhere, then a step either way
			at := randKey()
			i := sort.SearchStrings(want, string(at))
			k, _ := c.Seek(at)
			require.Equal(t, at2(want, i), string(k), "Seek %s in %s", at, b)
			if k == nil {
				continue
			}
			if rng.IntN(2) == 0 {
				k, _ = c.Next()
				require.Equal(t, at2(want, i+1), string(k), "Next after Seek %s in %s", at, b)
				if k == nil {
					continue // past the end, as bbolt's, a cursor is nowhere
				}
				k, _ = c.Prev()
				require.Equal(t, at2(want, i), string(k), "Prev after Next in %s", b)
			} else {
				k, _ = c.Prev()
				require.Equal(t, at2(want, i-1), string(k), "Prev after Seek %s in %s", at, b)
				if k != nil {
					k, _ = c.Next()
					require.Equal(t, at2(want, i), string(k), "Next after Prev in %s", b)
				}
			}
		}
	}
}

func sortedKeys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func reversed(s []string) []string {
	out := make([]string, 0, len(s))
	for i := len(s) - 1; i >= 0; i-- {
		out = append(out, s[i])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// at2 is want[i], or "" (a nil key) past either end.
func at2(want []string, i int) string {
	if i < 0 || i >= len(want) {
		return ""
	}
	return want[i]
}
