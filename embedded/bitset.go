package embedded

import "math/bits"

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
func (b bitset) complement(n int) bitset {
	out := make(bitset, len(b))
	for i := range b {
		out[i] = ^b[i]
	}
	if r := uint(n) % 64; r != 0 && len(out) > 0 {
		out[len(out)-1] &= (1 << r) - 1
	}
	return out
}
