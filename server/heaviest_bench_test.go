package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/graph"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/server"
	"github.com/capstan-dev/capstan/service"
)

// heavyEnv is a server over a large organization: the demo catalog plus
// 10,000 synthetic resources, and a finished operation of a 500-node
// plan (500 node runs, 500 evidence, ~1,500 events, two revisions).
type heavyEnv struct {
	ts               *httptest.Server
	op, plan, intent string
	cluster          string
}

func newHeavyEnv(b *testing.B) *heavyEnv {
	b.Helper()
	store := testenv.Store(b)
	svc := testenv.Demo(b, store)
	ctx := testenv.Admin(testenv.Org)
	if _, err := store.ImportResources(ctx, testenv.Org, testenv.SyntheticCatalog(testenv.BenchResources(10000))); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ex := executor.New(executor.Config{Store: store, Dir: b.TempDir(), JobDir: b.TempDir(), Log: log, Hooks: svc,
		Runners: map[string]job.Runner{"sim": local.SimRunner{Instant: true}}})
	runCtx, cancel := context.WithCancel(context.Background())
	b.Cleanup(func() { cancel(); ex.Stop() })
	if err := ex.Start(runCtx); err != nil {
		b.Fatal(err)
	}
	testenv.Wakes(svc).Listen(ex.Wake)
	if _, err := svc.InstallPackYAML(ctx, "big.yaml", []byte(testenv.BigPack(500))); err != nil {
		b.Fatal(err)
	}
	in, err := svc.CreateIntent(ctx, service.IntentInput{Action: "big", TargetResourceType: "thing", Constraints: map[string]any{"environment": "dev"}})
	if err != nil {
		b.Fatal(err)
	}
	plan, err := svc.PlanIntent(ctx, in.ID)
	if err != nil {
		b.Fatal(err)
	}
	op, err := svc.StartOperation(ctx, plan.ID, "")
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		got, err := store.GetOperation(ctx, testenv.Org, op.ID)
		if err == nil && got.Status.Terminal() {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the 500-node operation did not end")
		}
		time.Sleep(50 * time.Millisecond)
	}
	tokens, err := server.NewTokens([]server.Token{{Token: adminToken, Actor: "alice", Organization: testenv.Org, Roles: []string{capstan.RoleAdmin}}})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(server.Handler(server.Config{Service: svc, Tokens: tokens, Log: log}))
	b.Cleanup(ts.Close)
	cluster, err := store.GetResourceByKey(ctx, testenv.Org, "kubernetes.cluster/prod-k8s")
	if err != nil {
		b.Fatal(err)
	}
	return &heavyEnv{ts: ts, op: capstan.OperationGID(op.ID), plan: capstan.GlobalID(capstan.KindPlan, plan.ID), intent: capstan.GlobalID(capstan.KindIntent, in.ID),
		cluster: capstan.GlobalID(capstan.KindResource, cluster.ID)}
}

func aliasesOf(n int, field string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "a%d: %s\n", i, field)
	}
	return "{ " + b.String() + " }"
}

// heavyCandidates are the fields that do the most real work per unit of
// the cost limit; each is repeated under as many aliases as the limits
// admit (admitted finds how many).
func heavyCandidates(e *heavyEnv) map[string]string {
	const opFields = `nodeRuns { node status attempts error startedAt finishedAt revision } evidence { producedBy item result source observedAt } artifacts { id name storageRef }`
	const planFields = `nodes { key type title parameters job { run { runner } controls { retry { maximumAttempts } } } } edges { from to }`
	return map[string]string{
		"a page of resources":              `resources(first: 100) { totalCount edges { cursor node { id key name type environment lifecycleStatus healthStatus relationships { type targetKey target { key name } } providedCapabilities { capability scope attributes } } } }`,
		"a 500-node operation":             fmt.Sprintf(`operation(id: %q) { %s }`, e.op, opFields),
		"a 500-node plan":                  fmt.Sprintf(`plan(id: %q) { %s }`, e.plan, planFields),
		"a timeline page":                  fmt.Sprintf(`operation(id: %q) { timeline(first: 500) { edges { cursor node { sequence type actor at payload } } } }`, e.op),
		"a diff of two 500-node revisions": fmt.Sprintf(`planDiff(plan: %q, from: 1, to: 1) { fromDigest toDigest nodesChanged { key } }`, e.plan),
		"a revision of a 500-node plan":    fmt.Sprintf(`planRevision(plan: %q, revision: 1) { digest nodes { key type title } edges { from to } }`, e.plan),
		"a dependency walk 10 deep":        fmt.Sprintf(`dependencies(resource: %q, direction: INCOMING, depth: 10) { edges { from to relationship } }`, e.cluster),
		"a capability graph":               fmt.Sprintf(`plan(id: %q) { capabilityGraph { vertices { key kind } edges { from to label } } summary { currentPhase steps } }`, e.plan),
		"operations with their plans":      `operations(first: 50) { edges { node { id status progress { currentPhase needsAttention } plan { nodes { key } } } } }`,
	}
}

// admitted is the query of the most aliases of field (at most the root
// field limit) that every limit admits, and how many.
func admitted(b *testing.B, ts *httptest.Server, field string) (string, int) {
	best, n := "", 0
	for k := 1; k <= server.DefaultLimits.MaxRootFields; k++ {
		q := aliasesOf(k, field)
		if bytes.Contains(postBench(b, ts, q), []byte(`"errors"`)) {
			break
		}
		best, n = q, k
	}
	if n == 0 {
		b.Fatalf("not even one is admitted: %.300s", postBench(b, ts, aliasesOf(1, field)))
	}
	return best, n
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func postBench(b *testing.B, ts *httptest.Server, query string) []byte {
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return out
}

// BenchmarkHeaviestAdmittedRequest runs each candidate for the most
// expensive request the limits admit and reports its CPU time and bytes
// allocated per request (the whole process: server and in-process client);
// the heaviest is the figure for the ≤ 1 s CPU, ≤ 64 MB target.
func BenchmarkHeaviestAdmittedRequest(b *testing.B) {
	e := newHeavyEnv(b)
	candidates := heavyCandidates(e)
	names := make([]string, 0, len(candidates))
	for n := range candidates {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		q, n := admitted(b, e.ts, candidates[name])
		b.Run(fmt.Sprintf("%d× %s", n, name), func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			cpu := cpuTime()
			size := 0
			b.ResetTimer()
			for range b.N {
				size = len(postBench(b, e.ts, q))
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MB/op")
			b.ReportMetric(float64(size)/1024, "KiB-response")
		})
	}
}

// BenchmarkLimitChecks compares a typical plan-detail query with the time
// the limit checks take on it: the shape check (first sight of a
// document, and cached), and the cost.
func BenchmarkLimitChecks(b *testing.B) {
	e := newHeavyEnv(b)
	q := fmt.Sprintf(`{ plan(id: %q) { id status revision digest nodes { key type title job { run { runner } } } edges { from to } bindings { key status reason } } }`, e.plan)
	b.Run("plan-detail query", func(b *testing.B) {
		for range b.N {
			postBench(b, e.ts, q)
		}
	})
	b.Run("shape check, first sight", func(b *testing.B) {
		for range b.N {
			if err := server.CheckShape(q, server.DefaultLimits); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("shape check, cached (digest)", func(b *testing.B) {
		for range b.N {
			_ = sha256.Sum256([]byte(q))
		}
	})
	doc, errs := gqlparser.LoadQuery(graph.NewExecutableSchema(graph.Config{}).Schema(), q)
	if errs != nil {
		b.Fatal(errs)
	}
	b.Run("cost", func(b *testing.B) {
		for range b.N {
			if server.OperationCost(doc.Operations[0], nil) <= 0 {
				b.Fatal("no cost")
			}
		}
	})
}
