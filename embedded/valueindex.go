package embedded

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"

	"github.com/capstan-dev/capstan"
)

// provider is one provided capability of a resource: the resource's row
// in the organization's table and the capability's place in its list.
// It holds no pointers, so a catalog of them costs the collector nothing.
type provider struct {
	res, pc int32
}

// capIndex is the providers of one capability in key order, their active
// set, and a column per fact key, so a candidate search answers "which
// providers pass this check" with bitsets and touches each provider only
// for the checks it fails.
type capIndex struct {
	t         *resourceTable
	providers []provider
	active    bitset
	// lifecycles holds, per lifecycle status, the providers in it: a
	// requirement that accepts more than active (a repair) asks for the
	// union of its statuses.
	lifecycles map[capstan.LifecycleStatus]bitset
	cols       map[string]*column
}

// accepted returns the providers whose lifecycle accept accepts: the
// active set itself for the default (no copy), else a union in a.
func (c *capIndex) accepted(a *arena, accept capstan.Lifecycles) bitset {
	if len(accept) == 0 {
		return c.active
	}
	out := a.bitset(len(c.providers))
	for _, s := range accept {
		if b := c.lifecycles[s]; b != nil {
			out.or(b)
		}
	}
	return out
}

// column is one fact key's values over a capability's providers: a value
// id per provider (-1 where it declares none), numbers also as floats,
// and the exact-match set of each value, made when first asked for.
type column struct {
	ids     []int32
	byValue map[string]int32 // canonical value -> id
	numeric []float64        // nil when no provider's value is a number
	isNum   bitset

	mu    sync.Mutex
	exact map[int32]bitset
}

// newCapIndex indexes providers ps (in key order) whose facts are
// facts[i]: their lifecycle and every key a check may read of them (the
// provided scope and attributes, and environment). The name is read from
// the key instead (it is unique per provider: no column).
func newCapIndex(t *resourceTable, ps []provider, facts []capstan.CandidateFacts) *capIndex {
	n := len(ps)
	c := &capIndex{t: t, providers: ps, active: newBitset(n), lifecycles: map[capstan.LifecycleStatus]bitset{}, cols: map[string]*column{}}
	for i := range facts {
		f := &facts[i]
		if f.Lifecycle == capstan.LifecycleActive {
			c.active.set(i)
		}
		if c.lifecycles[f.Lifecycle] == nil {
			c.lifecycles[f.Lifecycle] = newBitset(n)
		}
		c.lifecycles[f.Lifecycle].set(i)
		c.note(i, n, "environment", f)
		for k := range f.Provided.Scope {
			c.note(i, n, k, f)
		}
		for k := range f.Provided.Attributes {
			c.note(i, n, k, f)
		}
	}
	return c
}

// note records provider i's value of k (once per key and provider).
func (c *capIndex) note(i, n int, k string, f *capstan.CandidateFacts) {
	if k == "name" {
		return
	}
	col := c.cols[k]
	if col == nil {
		col = &column{ids: make([]int32, n), byValue: map[string]int32{}}
		for j := range col.ids {
			col.ids[j] = -1
		}
		c.cols[k] = col
	}
	if col.ids[i] >= 0 {
		return
	}
	v, ok := f.Value(k)
	if !ok {
		return
	}
	canon := canonical(v)
	id, seen := col.byValue[canon]
	if !seen {
		id = int32(len(col.byValue))
		col.byValue[canon] = id
	}
	col.ids[i] = id
	if x, ok := capstan.Number(v); ok {
		if col.numeric == nil {
			col.numeric, col.isNum = make([]float64, n), newBitset(n)
		}
		col.numeric[i] = x
		col.isNum.set(i)
	}
}

// holding returns the providers whose value is canonically canon (nil for
// none); the set is made on first use and kept.
func (col *column) holding(canon string) bitset {
	id, ok := col.byValue[canon]
	if !ok {
		return nil
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if b := col.exact[id]; b != nil {
		return b
	}
	b := newBitset(len(col.ids))
	for i, v := range col.ids {
		if v == id {
			b.set(i)
		}
	}
	if col.exact == nil {
		col.exact = map[int32]bitset{}
	}
	col.exact[id] = b
	return b
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
	n := len(c.providers)
	out := a.bitset(n)
	if k == "name" {
		c.namesMatching(out, spec, want)
		return out
	}
	col := c.cols[k]
	if col == nil {
		return out // no provider declares it
	}
	if list, ok := want.([]any); ok {
		for _, w := range list {
			if b := col.holding(canonical(w)); b != nil {
				out.or(b)
			}
		}
		return out
	}
	if spec.Match == capstan.MatchMinimum || spec.Match == capstan.MatchMaximum {
		w, ok := capstan.Number(want)
		if !ok || col.numeric == nil {
			return out
		}
		col.isNum.each(n, func(i int) {
			if (spec.Match == capstan.MatchMinimum && col.numeric[i] >= w) || (spec.Match == capstan.MatchMaximum && col.numeric[i] <= w) {
				out.set(i)
			}
		})
		return out
	}
	if b := col.holding(canonical(want)); b != nil {
		out.or(b)
	}
	return out
}

// namesMatching sets in out the providers whose name equals want (or one
// of a list of wanted names). Names are strings, never numbers: a minimum
// or maximum passes none.
func (c *capIndex) namesMatching(out bitset, spec capstan.ConstraintSpec, want any) {
	var names [][]byte
	switch x := want.(type) {
	case string:
		names = append(names, []byte(x))
	case []any:
		for _, w := range x {
			if s, ok := w.(string); ok {
				names = append(names, []byte(s))
			}
		}
	}
	if spec.Match == capstan.MatchMinimum || spec.Match == capstan.MatchMaximum || len(names) == 0 {
		return
	}
	for i, p := range c.providers {
		name := c.t.name(p.res)
		for _, w := range names {
			if bytes.Equal(name, w) {
				out.set(i)
				break
			}
		}
	}
}
