package embedded

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/capstan-dev/capstan"
)

// resourceTable holds every resource of an organization for the candidate
// search as bytes, not as Go values: their keys in one arena and their
// JSON in another. A decoded catalog of 100,000 resources was two million
// heap objects for the garbage collector to mark on every cycle (~150 ms
// of marking, the search's whole tail); two arenas are two. A search
// decodes only the resources it returns, and keeps the most recent of
// them decoded (memo).
type resourceTable struct {
	keys    []byte
	keyEnds []int // resource i's key is keys[keyEnds[i-1]:keyEnds[i]]
	raw     []byte
	rawEnds []int // resource i's JSON is raw[rawEnds[i-1]:rawEnds[i]]

	mu   sync.Mutex
	memo map[int32]*decodedResource
}

// decodedResource is a resource as candidates show it, with the facts of
// each capability it provides (in its list's order).
type decodedResource struct {
	r     *capstan.Resource
	facts []capstan.CandidateFacts
}

// memoSize bounds the decoded resources a table keeps; when it is full it
// starts over (a search returns a few dozen).
const memoSize = 4096

// add appends a resource (its key and JSON) and returns its index.
func (t *resourceTable) add(key string, data []byte) int32 {
	t.keys = append(t.keys, key...)
	t.keyEnds = append(t.keyEnds, len(t.keys))
	t.raw = append(t.raw, data...)
	t.rawEnds = append(t.rawEnds, len(t.raw))
	return int32(len(t.keyEnds) - 1)
}

func span(ends []int, i int32) (int, int) {
	if i == 0 {
		return 0, ends[0]
	}
	return ends[i-1], ends[i]
}

// key returns resource i's key (valid while the table lives; do not keep).
func (t *resourceTable) key(i int32) []byte {
	from, to := span(t.keyEnds, i)
	return t.keys[from:to]
}

// compareKeys orders resources i and j by key.
func (t *resourceTable) compareKeys(i, j int32) int { return bytes.Compare(t.key(i), t.key(j)) }

// name returns the name part of resource i's key (type/name).
func (t *resourceTable) name(i int32) []byte {
	k := t.key(i)
	return k[bytes.IndexByte(k, '/')+1:]
}

// resource returns resource i as the search returns it (slim: what
// candidates show) with its facts, decoded once while it stays in the
// memo. Callers must not change it.
func (t *resourceTable) resource(i int32) (*decodedResource, error) {
	t.mu.Lock()
	d := t.memo[i]
	t.mu.Unlock()
	if d != nil {
		return d, nil
	}
	from, to := span(t.rawEnds, i)
	var full capstan.Resource
	if err := json.Unmarshal(t.raw[from:to], &full); err != nil {
		return nil, capstan.Wrap("embedded.FindCandidates", err)
	}
	d = &decodedResource{r: slimResource(&full)}
	for j := range d.r.ProvidedCapabilities {
		d.facts = append(d.facts, d.r.Facts(&d.r.ProvidedCapabilities[j]))
	}
	t.mu.Lock()
	if t.memo == nil || len(t.memo) >= memoSize {
		t.memo = make(map[int32]*decodedResource, 64)
	}
	t.memo[i] = d
	t.mu.Unlock()
	return d, nil
}

// slimResource is what a candidate shows of a resource.
func slimResource(r *capstan.Resource) *capstan.Resource {
	return &capstan.Resource{Meta: r.Meta, Type: r.Type, Name: r.Name, Environment: r.Environment,
		LifecycleStatus: r.LifecycleStatus, HealthStatus: r.HealthStatus, ProvidedCapabilities: r.ProvidedCapabilities}
}
