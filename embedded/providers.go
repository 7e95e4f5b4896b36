package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/capstan-dev/capstan"
)

// providerCache keeps, per organization, the capability definitions and
// every resource grouped by the capabilities it provides, indexed for the
// candidate search (resourceTable, capIndex). bbolt stays the truth: any
// write that touches resources or capabilities of an organization drops
// its entry, and an entry built from a read that raced with such a write
// is never kept (generation check).
type providerCache struct {
	mu   sync.Mutex
	gen  map[string]uint64
	orgs map[string]*orgProviders
}

type orgProviders struct {
	defs  map[string]*capstan.CapabilityDefinition
	table *resourceTable
	byCap map[string]*capIndex
}

func newProviderCache() *providerCache {
	return &providerCache{gen: map[string]uint64{}, orgs: map[string]*orgProviders{}}
}

// invalidate drops org's entry; call it after a write to org commits.
func (c *providerCache) invalidate(org string) {
	c.mu.Lock()
	c.gen[org]++
	delete(c.orgs, org)
	c.mu.Unlock()
}

func (s *Store) providers(ctx context.Context, org string) (*orgProviders, error) {
	c := s.cache
	c.mu.Lock()
	if p := c.orgs[org]; p != nil {
		c.mu.Unlock()
		return p, nil
	}
	gen := c.gen[org]
	c.mu.Unlock()

	p := &orgProviders{table: &resourceTable{}, byCap: map[string]*capIndex{}}
	type offer struct {
		p     provider
		facts capstan.CandidateFacts
	}
	lists := map[string][]offer{} // the facts are decoded once, here, and dropped after
	err := s.view(ctx, "embedded.providers", func(tx *rtx) error {
		var err error
		if p.defs, err = loadCapabilities(tx, org); err != nil {
			return err
		}
		return scan(tx.Bucket(bResources), prefix(org), nil, func(_, v []byte) (bool, error) {
			var r capstan.Resource
			if err := json.Unmarshal(v, &r); err != nil {
				return false, err
			}
			i := p.table.add(r.Key(), v)
			for j := range r.ProvidedCapabilities {
				pc := &r.ProvidedCapabilities[j]
				lists[pc.Capability] = append(lists[pc.Capability], offer{provider{i, int32(j)}, r.Facts(pc)})
			}
			return true, nil
		})
	})
	if err != nil {
		return nil, err
	}
	for capability, offers := range lists {
		slices.SortFunc(offers, func(a, b offer) int { return p.table.compareKeys(a.p.res, b.p.res) })
		ps := make([]provider, len(offers))
		facts := make([]capstan.CandidateFacts, len(offers))
		for i, o := range offers {
			ps[i], facts[i] = o.p, o.facts
		}
		p.byCap[capability] = newCapIndex(p.table, ps, facts)
	}
	c.mu.Lock()
	if c.gen[org] == gen {
		c.orgs[org] = p
	}
	c.mu.Unlock()
	return p, nil
}

// FindCandidates checks every provider of q.Capability, directly or
// through implication, with bitset indexes per constraint key, and selects
// what to return by the rule of capstan.SelectCandidates. Only what it
// returns is explained (CheckCandidate), so its cost grows with the
// catalog only through the bitset work.
func (s *Store) FindCandidates(ctx context.Context, org string, q capstan.CandidateQuery) (capstan.CandidateResult, error) {
	if err := capstan.CheckOrg(org); err != nil {
		return capstan.CandidateResult{}, err
	}
	p, err := s.providers(ctx, org)
	if err != nil {
		return capstan.CandidateResult{}, err
	}
	want := p.defs[q.Capability]
	if want == nil {
		return capstan.CandidateResult{}, capstan.Errorf(capstan.ENOTFOUND, "capability %s is not defined", q.Capability)
	}
	depth := q.MaxImplication
	if depth <= 0 {
		depth = capstan.DefaultImplicationDepth
	}
	keys := capstan.SortedKeys(q.Constraints)
	a := arenas.Get().(*arena)
	defer func() { a.reset(); arenas.Put(a) }()
	var judged []judgedSource
	for _, src := range capstan.ImplyingCapabilities(p.defs, q.Capability, depth) {
		ci := p.byCap[src.Capability]
		if ci != nil && q.Provider != "" {
			if ci, err = ci.only(q.Provider); err != nil {
				return capstan.CandidateResult{}, err
			}
		}
		if ci != nil {
			judged = append(judged, judge(a, ci, src, q.Lifecycles, keys, q.Constraints, want))
		}
	}
	res, kept := selectJudged(a, judged, keys, q)
	for i := range res.Candidates {
		c := &res.Candidates[i]
		d, err := p.table.resource(kept[i].res)
		if err != nil {
			return capstan.CandidateResult{}, err
		}
		slim := *d.r // callers get their own copy
		c.Resource = &slim
		c.Checks = capstan.CheckCandidateKeys(&d.facts[kept[i].pc], q.Lifecycles, keys, q.Constraints, want.Spec)
	}
	return res, s.fillConsumers(ctx, org, q.Owner, res.Candidates)
}

// only returns an index of the one provider with key, or nil.
func (c *capIndex) only(key string) (*capIndex, error) {
	k := []byte(key)
	i, ok := slices.BinarySearchFunc(c.providers, k, func(p provider, k []byte) int { return bytes.Compare(c.t.key(p.res), k) })
	if !ok {
		return nil, nil
	}
	p := c.providers[i]
	d, err := c.t.resource(p.res)
	if err != nil {
		return nil, err
	}
	return newCapIndex(c.t, []provider{p}, d.facts[p.pc:p.pc+1]), nil
}

// judgedSource is the verdict on every provider of one source capability:
// the failing set of each check (lifecycle first) and, bit-sliced, how
// many checks each provider failed: levels[0] holds the providers that
// passed every check, levels[L] those that failed exactly L.
type judgedSource struct {
	ci     *capIndex
	src    capstan.ImpliedSource
	fails  []bitset
	levels []bitset
}

func judge(a *arena, ci *capIndex, src capstan.ImpliedSource, accept capstan.Lifecycles, keys []string, want map[string]any, def *capstan.CapabilityDefinition) judgedSource {
	n := len(ci.providers)
	j := judgedSource{ci: ci, src: src}
	j.fails = append(j.fails, ci.accepted(a, accept).complement(a, n))
	for _, k := range keys {
		spec, _ := def.Spec(k)
		j.fails = append(j.fails, ci.passing(a, k, spec, want[k]).complement(a, n))
	}
	// atLeast[m] holds the providers that failed more than m checks.
	atLeast := make([]bitset, len(j.fails)+1)
	for m := range atLeast {
		atLeast[m] = a.bitset(n)
	}
	for _, f := range j.fails {
		for m := len(j.fails) - 1; m >= 1; m-- {
			for w := range f {
				atLeast[m][w] |= atLeast[m-1][w] & f[w]
			}
		}
		atLeast[0].or(f)
	}
	j.levels = append(j.levels, atLeast[0].complement(a, n))
	for m := 0; m < len(j.fails); m++ {
		j.levels = append(j.levels, atLeast[m].andNot(a, atLeast[m+1]))
	}
	return j
}

// selectJudged keeps the asked page of passing providers and the nearest
// misses (fewest failed checks, then rank order), counts the rest, and
// returns the kept ones in rank order with their failed keys.
func selectJudged(a *arena, judged []judgedSource, keys []string, q capstan.CandidateQuery) (capstan.CandidateResult, []provider) {
	maxRejected, maxPassing := q.MaxRejected, q.MaxPassing
	if maxRejected == 0 {
		maxRejected = capstan.DefaultMaxRejected
	}
	if maxPassing == 0 {
		maxPassing = capstan.DefaultMaxPassing
	}
	var res capstan.CandidateResult
	perLevel := make([]int, len(keys)+2)
	for _, j := range judged {
		res.Considered += len(j.ci.providers)
		for l, set := range j.levels {
			perLevel[l] += set.count()
		}
	}
	res.Passing = perLevel[0]
	kept := make([]bitset, len(judged))
	for s, j := range judged {
		kept[s] = a.bitset(len(j.ci.providers))
	}
	var picks []pick
	take := func(s, i int) { kept[s].set(i); picks = append(picks, pick{s, i}) }
	if maxPassing != 0 && q.SkipPassing < res.Passing {
		seen := 0
		inRankOrder(judged, 0, func(s, i int) bool {
			if seen >= q.SkipPassing {
				take(s, i)
			}
			seen++
			return maxPassing < 0 || seen < q.SkipPassing+maxPassing
		})
	}
	failing := res.Considered - res.Passing
	budget := failing
	if maxRejected >= 0 && maxRejected < failing {
		budget = maxRejected
	}
	res.Omitted = failing - budget
	for level := 1; level < len(perLevel) && budget > 0; level++ {
		if perLevel[level] == 0 {
			continue
		}
		inRankOrder(judged, level, func(s, i int) bool {
			take(s, i)
			budget--
			return budget > 0
		})
	}
	if res.Omitted > 0 {
		res.OmittedBy = omittedBy(a, judged, kept, keys)
	}
	slices.SortFunc(picks, func(a, b pick) int { return rankCompare(judged, a, b) })
	var out []provider
	res.Candidates, out = listPicks(judged, picks, keys)
	return res, out
}

// omittedBy counts, per check ("lifecycle" or a constraint key), the
// providers that failed it and were not kept for the answer.
func omittedBy(a *arena, judged []judgedSource, kept []bitset, keys []string) map[string]int {
	by := map[string]int{}
	names := append([]string{"lifecycle"}, keys...)
	for s, j := range judged {
		omitted := kept[s].complement(a, len(j.ci.providers))
		for f, fail := range j.fails {
			if n := fail.andCount(omitted); n > 0 {
				by[names[f]] += n
			}
		}
	}
	return by
}

// listPicks turns the picked providers, in rank order, into candidates
// with the checks each failed, and the providers themselves.
func listPicks(judged []judgedSource, picks []pick, keys []string) ([]capstan.Candidate, []provider) {
	if len(picks) == 0 {
		return nil, []provider{}
	}
	cands := make([]capstan.Candidate, 0, len(picks))
	out := make([]provider, 0, len(picks))
	for _, pk := range picks {
		j := judged[pk.s]
		var failed []string
		if j.fails[0].has(pk.i) {
			failed = append(failed, "lifecycle")
		}
		for f, k := range keys {
			if j.fails[f+1].has(pk.i) {
				failed = append(failed, k)
			}
		}
		cands = append(cands, capstan.Candidate{Capability: j.src.Capability, Via: j.src.Via, Failed: failed})
		out = append(out, j.ci.providers[pk.i])
	}
	return cands, out
}

// pick is provider i of judged source s.
type pick struct{ s, i int }

// rankCompare orders providers as ranking does: nearer implication first,
// then by resource key, then by capability.
func rankCompare(judged []judgedSource, a, b pick) int {
	if d := len(judged[a.s].src.Via) - len(judged[b.s].src.Via); d != 0 {
		return d
	}
	ta, tb := judged[a.s].ci, judged[b.s].ci
	if c := bytes.Compare(ta.t.key(ta.providers[a.i].res), tb.t.key(tb.providers[b.i].res)); c != 0 {
		return c
	}
	return strings.Compare(judged[a.s].src.Capability, judged[b.s].src.Capability)
}

// inRankOrder visits the providers that failed exactly level checks in
// rank order until visit returns false: sources of one implication depth
// are merged by key.
func inRankOrder(judged []judgedSource, level int, visit func(s, i int) bool) {
	for lo := 0; lo < len(judged); {
		hi := lo + 1
		for hi < len(judged) && len(judged[hi].src.Via) == len(judged[lo].src.Via) {
			hi++
		}
		next := make([]int, hi-lo) // the next provider of each source at this level
		for s := lo; s < hi; s++ {
			next[s-lo] = judged[s].levels[level].next(0, len(judged[s].ci.providers))
		}
		for {
			best := -1
			for s := lo; s < hi; s++ {
				if next[s-lo] >= 0 && (best < 0 || rankCompare(judged, pick{s, next[s-lo]}, pick{best, next[best-lo]}) < 0) {
					best = s
				}
			}
			if best < 0 {
				break
			}
			i := next[best-lo]
			next[best-lo] = judged[best].levels[level].next(i+1, len(judged[best].ci.providers))
			if !visit(best, i) {
				return
			}
		}
		lo = hi
	}
}
