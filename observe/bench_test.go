package observe_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/catalog"
	"github.com/capstan-dev/capstan/embedded"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/probe"
	"github.com/capstan-dev/capstan/executor/remote"
	"github.com/capstan-dev/capstan/internal/testhosts"
	"github.com/capstan-dev/capstan/observe"
	"github.com/capstan-dev/capstan/secret"
)

// benchResources is how many resources a round assesses
// (CAPSTAN_BENCH_RESOURCES, default 1,000).
func benchResources() int {
	if n, err := strconv.Atoi(os.Getenv("CAPSTAN_BENCH_RESOURCES")); err == nil && n > 0 {
		return n
	}
	return 1000
}

// BenchmarkAssessmentRound is one scheduled round over N resources on a
// real test host, three probes each (file with its checksum, service by
// pidfile, tcp), 8 at once through one pooled ssh connection, every
// verdict written to the embedded store. Reported: resources/s and
// probes/s. Run with
// go test -run '^$' -bench AssessmentRound -benchtime 3x ./observe (as root).
func BenchmarkAssessmentRound(b *testing.B) {
	n := benchResources()
	hosts := testhosts.Start(b, 1)
	h := hosts.Hosts[0]
	content := []byte("listen = 8080\n")
	if err := os.WriteFile(filepath.Join(h.Root, "etc", "bench.conf"), content, 0o644); err != nil {
		b.Fatal(err)
	}
	hosts.Exec(b, 0, "start-stop-daemon", "--start", "--background", "--make-pidfile", "--pidfile", "/run/bench.pid", "--exec", "/bin/sleep", "--", "infinity")
	sum := sha256.Sum256(content)

	store, err := embedded.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	nodes, err := catalog.Parse([]byte(hosts.Catalog("bench", "lab", "key")))
	if err != nil {
		b.Fatal(err)
	}
	rs := nodes
	for i := range n {
		rs = append(rs, &capstan.Resource{Type: "bench.service", Name: fmt.Sprintf("svc-%05d", i), Environment: "lab",
			LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
			DesiredState:  map[string]any{"config_sha256": hex.EncodeToString(sum[:]), "running": true},
			Relationships: []capstan.Relationship{{Type: capstan.RelRunsOn, Target: "compute.node/" + h.Name}}})
	}
	if _, err := store.ImportResources(ctx, "bench", rs); err != nil {
		b.Fatal(err)
	}
	pool := remote.NewPool(remote.Config{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}})
	defer pool.Close()
	spec := &capstan.ObserveSpec{Probes: []capstan.Probe{
		{Name: "config", Type: "file", Target: capstan.ObserveTarget, Path: "/etc/bench.conf", Observes: "config_sha256"},
		{Name: "process", Type: "service", Target: capstan.ObserveTarget, Pidfile: "/run/bench.pid", Observes: "running"},
		{Name: "port", Type: "tcp", Target: capstan.ObserveTarget, Port: 22},
	}}
	typed := benchStore{Store: store, types: []*capstan.ResourceType{{Key: "bench.service", DisplayName: "Bench", AllowedActions: []string{"install"}, Observe: spec}}}
	prober := probe.Prober{Remote: remote.Probes(pool, (&net.Dialer{}).DialContext)}
	assessor := &observe.Assessor{Store: typed, Prober: prober, Secrets: benchSecrets{"key": hosts.ClientKey}}
	schedule := &observe.Schedule{Assessor: assessor, Store: typed, Orgs: func() []string { return []string{"bench"} }, Every: time.Nanosecond, Concurrency: 8}
	b.Run("round", func(b *testing.B) {
		for b.Loop() {
			schedule.Round(ctx)
		}
		perRound := b.Elapsed().Seconds() / float64(b.N)
		b.ReportMetric(float64(n)/perRound, "resources/s")
		b.ReportMetric(float64(3*n)/perRound, "probes/s")
	})
	// The floor: as many ssh sessions running `true`, 8 at once on the
	// same pooled connection, with nothing decided or written.
	target := &job.Target{Requirement: "host", Resource: "compute.node/" + h.Name, Address: h.Address, Port: h.Port, User: "root",
		HostKeys: []string{h.HostKey}, Key: hosts.ClientKey}
	b.Run("floor-sessions", func(b *testing.B) {
		for b.Loop() {
			sem := make(chan struct{}, 8)
			var wg sync.WaitGroup
			for range 3 * n {
				sem <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					if res := pool.Exec(ctx, target, remote.Command{Script: "true"}); res.Err != nil {
						b.Error(res.Err)
					}
				}()
			}
			wg.Wait()
		}
		perRound := b.Elapsed().Seconds() / float64(b.N)
		b.ReportMetric(float64(3*n)/perRound, "probes/s")
	})
	list, _, err := store.ListResources(ctx, "bench", capstan.ResourceFilter{Type: "bench.service", Limit: n})
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range list {
		if r.Assessment == nil || r.Assessment.Health != capstan.HealthHealthy {
			b.Fatalf("%s: %+v", r.Key(), r.Assessment)
		}
	}
}

// benchStore is the embedded store with the benchmark's resource type.
type benchStore struct {
	*embedded.Store
	types []*capstan.ResourceType
}

func (s benchStore) ListResourceTypes(context.Context, string) ([]*capstan.ResourceType, error) {
	return s.types, nil
}

// benchSecrets holds the test hosts' client key.
type benchSecrets map[string][]byte

func (s benchSecrets) Get(_ context.Context, _, name string) ([]byte, error) { return s[name], nil }
func (s benchSecrets) Put(context.Context, string, string, []byte) error     { return nil }
func (s benchSecrets) Redactor(context.Context, string) (*secret.Redactor, error) {
	return nil, nil
}
