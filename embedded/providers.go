package embedded

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/capstan-dev/capstan"
)

// providerCache keeps, per organization, the capability definitions and a
// slim copy of every resource grouped by the capabilities it provides, so a
// candidate search checks structs in memory instead of decoding JSON. bbolt
// stays the truth: any write that touches resources or capabilities of an
// organization drops its entry, and an entry built from a read that raced
// with such a write is never kept (generation check).
type providerCache struct {
	mu   sync.Mutex
	gen  map[string]uint64
	orgs map[string]*orgProviders
}

type orgProviders struct {
	defs  map[string]*capstan.CapabilityDefinition
	byCap map[string][]provider // sorted by resource key
}

// provider is a slim resource and the facts of one capability it provides,
// held by value so a scan reads contiguous memory.
type provider struct {
	r     *capstan.Resource
	facts capstan.CandidateFacts
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

	p := &orgProviders{byCap: map[string][]provider{}}
	err := s.view(ctx, "embedded.providers", func(tx *bolt.Tx) error {
		var err error
		if p.defs, err = loadCapabilities(tx, org); err != nil {
			return err
		}
		return scan(tx.Bucket(bResources), prefix(org), nil, func(_, v []byte) (bool, error) {
			var r capstan.Resource
			if err := json.Unmarshal(v, &r); err != nil {
				return false, err
			}
			slim := &capstan.Resource{Meta: r.Meta, Type: r.Type, Name: r.Name, Environment: r.Environment,
				LifecycleStatus: r.LifecycleStatus, HealthStatus: r.HealthStatus, ProvidedCapabilities: r.ProvidedCapabilities}
			for i := range slim.ProvidedCapabilities {
				pc := &slim.ProvidedCapabilities[i]
				p.byCap[pc.Capability] = append(p.byCap[pc.Capability], provider{slim, slim.Facts(pc)})
			}
			return true, nil
		})
	})
	if err != nil {
		return nil, err
	}
	for _, rs := range p.byCap {
		slices.SortFunc(rs, func(a, b provider) int { return strings.Compare(a.r.Key(), b.r.Key()) })
	}
	c.mu.Lock()
	if c.gen[org] == gen {
		c.orgs[org] = p
	}
	c.mu.Unlock()
	return p, nil
}

// FindCandidates checks every provider of q.Capability, directly or
// through implication, and selects what to return (capstan.SelectCandidates).
func (s *Store) FindCandidates(ctx context.Context, org string, q capstan.CandidateQuery) (capstan.CandidateResult, error) {
	if err := checkOrg(org); err != nil {
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
	wantKeys := capstan.SortedKeys(q.Constraints)
	sources := capstan.ImplyingCapabilities(p.defs, q.Capability, depth)
	n := 0
	for _, src := range sources {
		n += len(p.byCap[src.Capability])
	}
	all := make([]capstan.Candidate, 0, n)
	failed := make([]string, 0, n*2)
	for _, src := range sources {
		list := p.byCap[src.Capability]
		for i := range list {
			pv := &list[i]
			start := len(failed)
			failed = capstan.CandidateFailures(failed, &pv.facts, q.Constraints, wantKeys, want.Spec)
			all = append(all, capstan.Candidate{
				Resource: pv.r, Capability: src.Capability, Via: src.Via,
				Failed: failed[start:len(failed):len(failed)],
			})
		}
	}
	res := capstan.SelectCandidates(all, q.MaxRejected)
	for i := range res.Candidates {
		c := &res.Candidates[i]
		slim := *c.Resource // callers get their own copy
		c.Resource = &slim
		facts := slim.Facts(slim.Provides(c.Capability))
		c.Checks = capstan.CheckCandidate(&facts, q.Constraints, want.Spec)
	}
	return res, nil
}
