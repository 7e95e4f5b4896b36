package embedded

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/capstan-dev/capstan"
)

// keyIndex answers "which providers pass this constraint" for one
// capability and one constraint key with bitsets, so a candidate search
// touches each provider only for the checks it fails.
type keyIndex struct {
	exact   map[string]bitset // canonical value -> providers holding it
	numeric []float64         // value per provider, when numeric
	isNum   bitset
}

// capIndex is the providers of one capability in key order, their active
// set, and key indexes built on first use.
type capIndex struct {
	providers []provider
	active    bitset
	mu        sync.Mutex
	keys      map[string]*keyIndex
}

func newCapIndex(ps []provider) *capIndex {
	c := &capIndex{providers: ps, active: newBitset(len(ps)), keys: map[string]*keyIndex{}}
	for i := range ps {
		if ps[i].facts.Lifecycle == capstan.LifecycleActive {
			c.active.set(i)
		}
	}
	return c
}

func (c *capIndex) key(k string) *keyIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ki := c.keys[k]; ki != nil {
		return ki
	}
	n := len(c.providers)
	ki := &keyIndex{exact: map[string]bitset{}, numeric: make([]float64, n), isNum: newBitset(n)}
	for i := range c.providers {
		v, ok := c.providers[i].facts.Value(k)
		if !ok {
			continue
		}
		canon := canonical(v)
		b := ki.exact[canon]
		if b == nil {
			b = newBitset(n)
			ki.exact[canon] = b
		}
		b.set(i)
		if f, ok := capstan.Number(v); ok {
			ki.numeric[i] = f
			ki.isNum.set(i)
		}
	}
	c.keys[k] = ki
	return ki
}

// canonical names a value so that values equal under capstan's constraint
// equality share a name: numbers by their float value, strings and bools
// by type and value.
func canonical(v any) string {
	switch x := v.(type) {
	case string:
		return "s:" + x
	case bool:
		return "b:" + strconv.FormatBool(x)
	}
	if f, ok := capstan.Number(v); ok {
		return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprintf("x:%T:%v", v, v)
}

// passing returns the providers that pass the check of k against want.
func (c *capIndex) passing(a *arena, k string, spec capstan.ConstraintSpec, want any) bitset {
	ki := c.key(k)
	n := len(c.providers)
	out := a.bitset(n)
	if list, ok := want.([]any); ok {
		for _, w := range list {
			if b := ki.exact[canonical(w)]; b != nil {
				out.or(b)
			}
		}
		return out
	}
	if spec.Match == capstan.MatchMinimum || spec.Match == capstan.MatchMaximum {
		w, ok := capstan.Number(want)
		if !ok {
			return out
		}
		ki.isNum.each(n, func(i int) {
			if (spec.Match == capstan.MatchMinimum && ki.numeric[i] >= w) || (spec.Match == capstan.MatchMaximum && ki.numeric[i] <= w) {
				out.set(i)
			}
		})
		return out
	}
	if b := ki.exact[canonical(want)]; b != nil {
		out.or(b)
	}
	return out
}
