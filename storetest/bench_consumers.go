package storetest

import (
	"fmt"
	"testing"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
)

// BenchmarkCrowdedProvider measures the search for one provider that
// CAPSTAN_BENCH_RESOURCES workloads (default 10,000) use: the candidate
// carries MaxConsumers of them and says there are more, so its cost must
// not grow with them.
func BenchmarkCrowdedProvider(b *testing.B, open func(b *testing.B) capstan.Store) {
	n := testenv.BenchResources(10_000)
	s := open(b)
	org := "crowd-" + capstan.NewID()[12:]
	installTestPackB(b, s, org)
	provider := resource("s3.bucket", "crowded", "prod", provides("object_storage.s3", map[string]any{"region": "eu"}, nil))
	rs := []*capstan.Resource{provider}
	for i := range n {
		r := resource("tempo.instance", fmt.Sprintf("user-%06d", i), "prod")
		r.Relationships = []capstan.Relationship{{Type: capstan.RelUses, Target: provider.Key()}}
		rs = append(rs, r)
	}
	for i := 0; i < len(rs); i += 5000 {
		if _, err := s.ImportResources(ctx, org, rs[i:min(i+5000, len(rs))]); err != nil {
			b.Fatal(err)
		}
	}
	q := capstan.CandidateQuery{Capability: "object_storage.s3", Provider: provider.Key()}
	Measure(b, func() error {
		res, err := s.FindCandidates(ctx, org, q)
		if err == nil && (len(res.Candidates) != 1 || !res.Candidates[0].MoreConsumers) {
			err = fmt.Errorf("want one candidate with more consumers than %d, got %+v", capstan.MaxConsumers, res.Candidates)
		}
		return err
	})
	b.ReportMetric(float64(n), "consumers")
}
