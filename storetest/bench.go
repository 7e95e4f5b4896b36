package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
)

// BenchSizes are the catalog sizes the candidate-search benchmarks use:
// CAPSTAN_BENCH_RESOURCES alone when set (testenv.BenchResources).
func BenchSizes() []int {
	if testenv.BenchSmall() {
		return []int{testenv.BenchResources(0)}
	}
	return []int{1000, 10000, 100000}
}

// benchQuery is the seed's object-storage requirement, resolved.
var benchQuery = capstan.CandidateQuery{Capability: "object_storage.s3",
	Constraints: map[string]any{"environment": "prod", "region": "eu-central", "encryption": "required"}}

// BenchmarkCandidates measures one candidate search on catalogs of
// BenchSizes resources (FindCandidates, and the naive way: fetch every
// provider, filter in Go), reporting p50 and p99 latency, and the import
// rate of the catalog. Stores run it from their own benchmarks.
func BenchmarkCandidates(b *testing.B, open func(b *testing.B) capstan.Store) {
	for _, n := range BenchSizes() {
		b.Run(fmt.Sprintf("resources=%d", n), func(b *testing.B) {
			s := open(b)
			org := "bench-" + capstan.NewID()[12:]
			installTestPackB(b, s, org)
			rs := testenv.SyntheticCatalog(n)
			start := time.Now()
			for i := 0; i < len(rs); i += 5000 {
				if _, err := s.ImportResources(ctx, org, rs[i:min(i+5000, len(rs))]); err != nil {
					b.Fatal(err)
				}
			}
			rate := float64(n) / time.Since(start).Seconds()
			b.Run("find", func(b *testing.B) {
				Measure(b, func() error { _, err := s.FindCandidates(ctx, org, benchQuery); return err })
				b.ReportMetric(rate, "imported/s")
			})
			b.Run("naive", func(b *testing.B) {
				Measure(b, func() error { return naiveSearch(s, org) })
			})
		})
	}
}

func installTestPackB(b *testing.B, s capstan.Store, org string) {
	if _, err := s.InstallPack(ctx, org, testPack("1.0.0")); err != nil {
		b.Fatal(err)
	}
}

// naiveSearch is the baseline: every provider of the capability, fetched
// whole and checked in Go.
func naiveSearch(s capstan.Store, org string) error {
	def, err := s.GetCapability(ctx, org, benchQuery.Capability)
	if err != nil {
		return err
	}
	rs, _, err := s.ListResources(ctx, org, capstan.ResourceFilter{Capability: benchQuery.Capability, Limit: 1 << 30})
	if err != nil {
		return err
	}
	var all []capstan.Candidate
	for _, r := range rs {
		facts := r.Facts(r.Provides(benchQuery.Capability))
		all = append(all, capstan.Candidate{Resource: r, Capability: benchQuery.Capability,
			Checks: capstan.CheckCandidate(&facts, nil, benchQuery.Constraints, def.Spec)})
	}
	_ = capstan.SelectCandidates(all, benchQuery)
	return nil
}

// Measure runs fn b.N times and reports p50 and p99 latency in ms. It warms
// up first (10 calls or 1 s, whichever ends first), so the figures are of a
// running server, not of its first query plans.
func Measure(b *testing.B, fn func() error) {
	for i, start := 0, time.Now(); i < 10 && time.Since(start) < time.Second; i++ {
		if err := fn(); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(p(0.50), "p50-ms")
	b.ReportMetric(p(0.99), "p99-ms")
}
