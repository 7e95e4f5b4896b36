package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/gqlws"
	"github.com/capstan-dev/capstan/internal/metrics"
)

// soakPack is a small operation that meets every kind of wait: a gate a
// second person approves, a job, a verification.
const soakPack = `id: soak
version: 1.0.0
capabilities:
  - {key: soak.item, category: test}
scenarios:
  - id: soak.create
    action: create
    target_resource_type: soak.item
    provides: [{capability: soak.item}]
    plan:
      nodes:
        - id: approve
          type: gate
          title: Approve
          gate: {type: approval, reason: A soak., required_roles: [sre], approvals: 1, timeout: 24h}
        - id: work
          type: job
          title: Work
          after: [approve]
          job:
            run: {runner: sim}
            outputs: {evidence: [{name: worked, type: sim}]}
        - id: verify
          type: verification
          title: Verify
          after: [work]
          probes: [{name: fine, type: sim}]
`

// serverGauges reads the server's own gauges from /metrics: goroutines,
// live heap after a collection (bytes) and open file descriptors. It has the server
// collect its garbage first (the profiling endpoint's gc=1), so the heap
// is what is live, not what the collector has not reached yet.
func serverGauges(t *testing.T, p *proc) (goroutines, heap, fds float64) {
	t.Helper()
	resp, err := http.Get(p.url + "/debug/pprof/heap?gc=1")
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the soak's server serves /debug/pprof (CAPSTAN_PPROF=1)")
	g, err := metrics.Scrape(p.url)
	require.NoError(t, err)
	// The bytes of live objects after the collection, not the spans in
	// use: those hold garbage's neighbours too, more of them the longer
	// the collector waits (the server runs it at GOGC=400).
	heapLive, ok := g["go_memstats_heap_alloc_bytes"]
	require.True(t, ok, "the server's /metrics gives go_memstats_heap_alloc_bytes")
	return g["go_goroutines"], heapLive, g["process_open_fds"]
}

// settledGauges samples the gauges for a while and keeps the lowest of
// each: what the server holds when nothing runs (a sample may catch a
// request of its own, or the heap before a collection).
func settledGauges(t *testing.T, p *proc) (goroutines, heap, fds float64) {
	t.Helper()
	goroutines, heap, fds = serverGauges(t, p)
	for i := 0; i < 20; i++ {
		time.Sleep(150 * time.Millisecond)
		g, h, f := serverGauges(t, p)
		goroutines, heap, fds = min(goroutines, g), min(heap, h), min(fds, f)
	}
	return goroutines, heap, fds
}

// soakOperations runs n soak operations, concurrency at a time, through
// the server's API: each is created, planned and started, followed by
// subscribers (one that stays to the end, one that leaves early), and
// approved by the second approver. Each worker changes a resource of its
// own (the first create makes it, the next ones update it), so the
// catalog does not grow with n and what the heap keeps is what leaked.
func soakOperations(t *testing.T, p *proc, n, concurrency int) {
	t.Helper()
	jobs := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				errs <- soakOne(p, w)
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func soakOne(p *proc, worker int) error {
	gql := func(bearer, q string, vars map[string]any) (map[string]any, error) {
		body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
		req, err := http.NewRequest(http.MethodPost, p.url+"/graphql", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+bearer)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var out struct {
			Data   map[string]any
			Errors []map[string]any
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return nil, err
		}
		if len(out.Errors) > 0 {
			return nil, fmt.Errorf("%s: %v", q, out.Errors)
		}
		return out.Data, nil
	}
	in, err := gql(token, `mutation($n: String!) { createIntent(input: {action: "create", targetResourceType: "soak.item", desiredResult: {name: $n}, constraints: {environment: "dev"}}) { id } }`,
		map[string]any{"n": fmt.Sprintf("worker-%d", worker)})
	if err != nil {
		return err
	}
	plan, err := gql(token, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": in["createIntent"].(map[string]any)["id"]})
	if err != nil {
		return err
	}
	started, err := gql(token, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["planIntent"].(map[string]any)["id"]})
	if err != nil {
		return err
	}
	op := started["startOperation"].(map[string]any)["id"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stays, err := gqlws.Dial(ctx, p.url+"/graphql", token)
	if err != nil {
		return err
	}
	defer stays.Close()
	if err := stays.Subscribe("events", `subscription($op: ID!) { operationEvents(operation: $op) { cursor node { type } } }`, map[string]any{"op": op}); err != nil {
		return err
	}
	leaves, err := gqlws.Dial(ctx, p.url+"/graphql", token)
	if err != nil {
		return err
	}
	if err := leaves.Subscribe("progress", `subscription($op: ID!) { operationProgress(operation: $op) { status } }`, map[string]any{"op": op}); err != nil {
		return err
	}
	if _, err := leaves.Next(); err != nil {
		return err
	}
	leaves.Close() // a dashboard closed mid-operation
	var last string
	succeeded := false
	for {
		m, err := stays.Next()
		if err != nil {
			return err
		}
		if m.Type == "complete" {
			if !succeeded {
				return fmt.Errorf("operation %s did not succeed; its last event: %s", op, last)
			}
			return nil
		}
		if m.Type != "next" {
			return fmt.Errorf("operation %s: %s %s", op, m.Type, m.Payload)
		}
		var e struct {
			OperationEvents struct{ Node struct{ Type string } }
		}
		if err := gqlws.Data(m, &e); err != nil {
			return err
		}
		last = e.OperationEvents.Node.Type
		succeeded = succeeded || last == "operation.succeeded"
		if e.OperationEvents.Node.Type == "gate.waiting" {
			if _, err := gql(token+"-sre", `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve", approve: true}) { status } }`, map[string]any{"op": op}); err != nil {
				return err
			}
		}
	}
}

// TestSoakReturnsToItsStartingLevel runs 1,000 operations through a real
// server (SOAK_OPERATIONS sets how many; `make soak` runs a longer one):
// gates approved, subscribers attached and detached. Once they end, the
// server's goroutines, live heap and open file descriptors are back to
// where they were after a warm-up, within a small constant: nothing an
// operation or a subscriber started outlives it.
func TestSoakReturnsToItsStartingLevel(t *testing.T) {
	t.Parallel()
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("SOAK_OPERATIONS")); err == nil && v > 0 {
		n = v
	}
	// The server collects its garbage when the gauges are read.
	p := launchWith(t, withEnv("CAPSTAN_PPROF=1"), t.TempDir())
	p.waitReady(t, 60*time.Second)
	p.gql(t, `mutation($y: String!) { installScenarioPack(input: {document: $y}) { id } }`, map[string]any{"y": soakPack})
	soakOperations(t, p, 20, 10) // warm-up: pools, caches and connections settle
	g0, h0, f0 := settledGauges(t, p)
	began := time.Now()
	soakOperations(t, p, n, 16)
	took := time.Since(began)
	g1, h1, f1 := settledGauges(t, p)
	t.Logf("soak: %d operations in %v (%.0f/s); goroutines %v -> %v, live heap %.1f -> %.1f MB, open fds %v -> %v",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds(), g0, g1, h0/1e6, h1/1e6, f0, f1)
	require.LessOrEqual(t, g1, g0+10, "goroutines left behind by %d operations", n)
	require.LessOrEqual(t, f1, f0+10, "file descriptors left open by %d operations", n)
	require.LessOrEqual(t, h1, h0+16e6, "live heap kept by %d operations", n)
}
