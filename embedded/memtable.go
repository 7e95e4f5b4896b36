package embedded

import (
	"bytes"

	"github.com/tidwall/btree"
	bolt "go.etcd.io/bbolt"
)

// The memtable. A write is durable once its batch is appended to the
// step log; bbolt only has to hold it by the next checkpoint. So a
// batch's writes go into an in-memory B-tree (the active memtable),
// which readers see above bbolt, and bbolt takes them in a flush: a
// background transaction every few megabytes or milliseconds. A flush
// writes a key once however often the steps since the last one changed
// it (an operation's record is written at every step; its node runs,
// twice each), and its pages once for all the steps on them.
//
// A flush freezes the active memtable and starts an empty one; readers
// see the active, then the frozen, then bbolt. When the flush has
// committed, the frozen one is dropped in the same publication that
// names the bbolt transaction readers must begin at (memState.txid): a
// reader whose bbolt transaction is not that one read the state between
// the commit and its publication and begins again, so no reader sees a
// write twice, misses one, or mixes two states.

// memItem is one write not yet flushed: a value, or a deletion.
type memItem struct {
	bucket  string
	key     []byte
	value   []byte
	deleted bool
}

func memLess(a, b memItem) bool {
	if a.bucket != b.bucket {
		return a.bucket < b.bucket
	}
	return bytes.Compare(a.key, b.key) < 0
}

type memTree = btree.BTreeG[memItem]

func newMemTree() *memTree {
	return btree.NewBTreeGOptions(memLess, btree.Options{NoLocks: true})
}

// memState is what readers see above bbolt: the writes since the last
// flush, those the running flush writes (nil when none runs), and the
// bbolt transaction that holds every write before them.
type memState struct {
	active, frozen *memTree
	txid           int
}

// trees are the memtables newest first.
func (m *memState) trees() []*memTree {
	if m.frozen == nil {
		return []*memTree{m.active}
	}
	return []*memTree{m.active, m.frozen}
}

// rtx is a consistent read of the store: memtables, newest first, above
// a bbolt read transaction. Its methods are the part of bbolt's the
// store reads with.
type rtx struct {
	mem []*memTree
	tx  *bolt.Tx
}

// Bucket is the named bucket, or nil when the database has none.
func (t *rtx) Bucket(name []byte) *rbucket {
	b := t.tx.Bucket(name)
	if b == nil {
		return nil
	}
	return &rbucket{t: t, name: string(name), b: b}
}

// rbucket is a bucket as rtx reads it.
type rbucket struct {
	t    *rtx
	name string
	b    *bolt.Bucket
}

// Get is k's value, nil when there is none.
func (b *rbucket) Get(k []byte) []byte {
	for _, m := range b.t.mem {
		if it, ok := m.Get(memItem{bucket: b.name, key: k}); ok {
			if it.deleted {
				return nil
			}
			if it.value == nil {
				return []byte{}
			}
			return it.value
		}
	}
	return b.b.Get(k)
}

// ForEach calls fn for every key in order.
func (b *rbucket) ForEach(fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// Cursor walks the bucket's keys in order, the memtables' merged with
// bbolt's.
func (b *rbucket) Cursor() *rcursor {
	c := &rcursor{b: b, bolt: b.b.Cursor(), mem: make([]memSource, len(b.t.mem))}
	for i, m := range b.t.mem {
		c.mem[i].it = m.Iter()
	}
	return c
}

// memSource is a memtable's position in a cursor.
type memSource struct {
	it btree.IterG[memItem]
	ok bool // it is on an item of the bucket
}

func (m *memSource) key() []byte { return m.it.Item().key }

// rcursor merges the memtables' items of a bucket with bbolt's cursor:
// at equal keys the newest memtable wins, and a deletion hides the key.
type rcursor struct {
	b        *rbucket
	bolt     *bolt.Cursor
	mem      []memSource
	bk, bv   []byte // bbolt's position
	key      []byte // the key last returned
	backward bool   // the sources sit before key (Prev, Last), not after it
}

func (c *rcursor) in(m *memSource, ok bool) {
	m.ok = ok && m.it.Item().bucket == c.b.name
}

// Seek moves to the first key at or after k.
func (c *rcursor) Seek(k []byte) ([]byte, []byte) {
	c.backward = false
	for i := range c.mem {
		m := &c.mem[i]
		c.in(m, m.it.Seek(memItem{bucket: c.b.name, key: k}))
	}
	c.bk, c.bv = c.bolt.Seek(k)
	return c.forward()
}

// First moves to the first key.
func (c *rcursor) First() ([]byte, []byte) { return c.Seek(nil) }

// Next moves past the key last returned.
func (c *rcursor) Next() ([]byte, []byte) {
	if c.key == nil {
		return nil, nil
	}
	if c.backward {
		k := c.key
		c.Seek(k)
		if !bytes.Equal(c.key, k) {
			return c.key, c.value()
		}
	}
	c.stepPast(c.key)
	return c.forward()
}

// Last moves to the last key.
func (c *rcursor) Last() ([]byte, []byte) {
	c.backward = true
	for i := range c.mem {
		m := &c.mem[i]
		// past the bucket's last item: the first of the next bucket, or none
		if m.it.Seek(memItem{bucket: c.b.name + "\x00"}) {
			c.in(m, m.it.Prev())
		} else {
			c.in(m, m.it.Last())
		}
	}
	c.bk, c.bv = c.bolt.Last()
	return c.backwardPick()
}

// Prev moves to the key before the key last returned.
func (c *rcursor) Prev() ([]byte, []byte) {
	if c.key == nil {
		return nil, nil
	}
	k := c.key
	c.backward = true
	for i := range c.mem {
		m := &c.mem[i]
		if m.it.Seek(memItem{bucket: c.b.name, key: k}) {
			c.in(m, m.it.Prev())
		} else {
			c.in(m, m.it.Last())
		}
	}
	if bk, _ := c.bolt.Seek(k); bk == nil {
		c.bk, c.bv = c.bolt.Last()
	} else {
		c.bk, c.bv = c.bolt.Prev()
	}
	return c.backwardPick()
}

// forward returns the smallest key of the sources that is not deleted.
func (c *rcursor) forward() ([]byte, []byte) {
	for {
		k := c.bk
		for i := range c.mem {
			if m := &c.mem[i]; m.ok && (k == nil || bytes.Compare(m.key(), k) < 0) {
				k = m.key()
			}
		}
		c.key = k
		if k == nil {
			return nil, nil
		}
		if v, live := c.at(k); live {
			return k, v
		}
		c.stepPast(k)
	}
}

// backwardPick returns the largest key of the sources that is not
// deleted.
func (c *rcursor) backwardPick() ([]byte, []byte) {
	for {
		k := c.bk
		for i := range c.mem {
			if m := &c.mem[i]; m.ok && (k == nil || bytes.Compare(m.key(), k) > 0) {
				k = m.key()
			}
		}
		c.key = k
		if k == nil {
			return nil, nil
		}
		if v, live := c.at(k); live {
			return k, v
		}
		for i := range c.mem {
			if m := &c.mem[i]; m.ok && bytes.Equal(m.key(), k) {
				c.in(m, m.it.Prev())
			}
		}
		if c.bk != nil && bytes.Equal(c.bk, k) {
			c.bk, c.bv = c.bolt.Prev()
		}
	}
}

// at is k's value by the newest source that has it, with whether it is
// live (not deleted).
func (c *rcursor) at(k []byte) ([]byte, bool) {
	for i := range c.mem {
		if m := &c.mem[i]; m.ok && bytes.Equal(m.key(), k) {
			it := m.it.Item()
			if it.deleted {
				return nil, false
			}
			if it.value == nil {
				return []byte{}, true
			}
			return it.value, true
		}
	}
	return c.bv, true
}

// value is the value at the cursor's key.
func (c *rcursor) value() []byte {
	v, _ := c.at(c.key)
	return v
}

// stepPast moves every source sitting on k to its next key.
func (c *rcursor) stepPast(k []byte) {
	for i := range c.mem {
		if m := &c.mem[i]; m.ok && bytes.Equal(m.key(), k) {
			c.in(m, m.it.Next())
		}
	}
	if c.bk != nil && bytes.Equal(c.bk, k) {
		c.bk, c.bv = c.bolt.Next()
	}
}
