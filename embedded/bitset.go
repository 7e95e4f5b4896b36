package embedded

import (
	"math/bits"
	"sync"
)

// bitset is a fixed-size set of provider positions.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i/64] |= 1 << (uint(i) % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(uint(i)%64)) != 0 }

// or sets b to b | o.
func (b bitset) or(o bitset) {
	for i := range o {
		b[i] |= o[i]
	}
}

// andNotCount counts the bits of b that are not in o, within n bits.
func (b bitset) andCount(o bitset) int {
	c := 0
	for i := range b {
		c += bits.OnesCount64(b[i] & o[i])
	}
	return c
}

// each calls fn for every set bit below n, in order.
func (b bitset) each(n int, fn func(i int)) {
	for w, word := range b {
		for word != 0 {
			i := w*64 + bits.TrailingZeros64(word)
			if i >= n {
				return
			}
			fn(i)
			word &= word - 1
		}
	}
}

// complement returns the bits below n that are not in b.
func (b bitset) complement(a *arena, n int) bitset {
	out := a.bitset(n)
	for i := range b {
		out[i] = ^b[i]
	}
	if r := uint(n) % 64; r != 0 && len(out) > 0 {
		out[len(out)-1] &= (1 << r) - 1
	}
	return out
}

// next returns the first set bit at or after i and below n, or -1.
func (b bitset) next(i, n int) int {
	for w := i / 64; w < len(b) && i < n; w++ {
		word := b[w]
		if w == i/64 {
			word &= ^uint64(0) << (uint(i) % 64)
		}
		if word != 0 {
			if j := w*64 + bits.TrailingZeros64(word); j < n {
				return j
			}
			return -1
		}
	}
	return -1
}

// count returns how many bits are set.
func (b bitset) count() int {
	c := 0
	for _, w := range b {
		c += bits.OnesCount64(w)
	}
	return c
}

// andNot returns b &^ o.
func (b bitset) andNot(a *arena, o bitset) bitset {
	out := a.bitset(len(b) * 64)
	for i := range b {
		out[i] = b[i] &^ o[i]
	}
	return out
}

// arena hands out the scratch bitsets of one candidate search from
// reused chunks, so a search allocates (almost) nothing: less garbage,
// fewer collections, a shorter tail.
type arena struct {
	chunks   [][]uint64
	cur, off int
}

var arenas = sync.Pool{New: func() any { return &arena{} }}

// bitset returns a zeroed bitset of n bits.
func (a *arena) bitset(n int) bitset {
	words := (n + 63) / 64
	for {
		if a.cur < len(a.chunks) {
			c := a.chunks[a.cur]
			if a.off+words <= len(c) {
				b := c[a.off : a.off+words : a.off+words]
				clear(b)
				a.off += words
				return b
			}
			a.cur, a.off = a.cur+1, 0
			continue
		}
		a.chunks = append(a.chunks, make([]uint64, max(words, 1<<13)))
	}
}

func (a *arena) reset() { a.cur, a.off = 0, 0 }
