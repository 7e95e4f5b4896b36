package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/testenv"
)

// startMany runs start(i) for i in [0, n), four at a time, and returns
// what each returned, in order, or the first error (the rest are not
// started).
func startMany(n int, start func(i int) (string, error)) ([]string, error) {
	out := make([]string, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				id, err := start(i)
				mu.Lock()
				out[i] = id
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return out, first
}

// runQuiet creates, plans and starts an intent on p without failing the
// test from another goroutine: it returns the operation's id or why not.
func runQuiet(p *proc, typ, name string) (string, error) { return runAs(p, token, typ, name) }

// runAs is runQuiet with another bearer token.
func runAs(p *proc, bearer, typ, name string) (string, error) {
	step := func(query string, vars map[string]any, path ...string) (string, error) {
		r, err := postQuiet(p, bearer, query, vars)
		if err != nil {
			return "", err
		}
		if len(r.Errors) > 0 {
			return "", fmt.Errorf("%v", r.Errors)
		}
		var v any = r.Data
		for _, k := range path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		s, _ := v.(string)
		return s, nil
	}
	in, err := step(`mutation($t: String!, $n: String!) { createIntent(input: {action: "install", targetResourceType: $t, desiredResult: {name: $n}, constraints: {environment: "staging"}}) { id } }`,
		map[string]any{"t": typ, "n": name}, "createIntent", "id")
	if err != nil {
		return "", err
	}
	plan, err := step(`mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": in}, "planIntent", "id")
	if err != nil {
		return "", err
	}
	return step(`mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan}, "startOperation", "id")
}

// benchPack has the console benchmark's two scenarios: a 500-node plan
// (50 layers of 10 simulated jobs, each after two of the layer before)
// behind a gate, and a small plan (a gate, then one job) for a thousand
// operations.
func benchPack() string {
	var b strings.Builder
	b.WriteString(`id: bench
version: 1.0.0
scenarios:
  - id: wide.thing
    action: install
    target_resource_type: wide
    plan:
      nodes:
        - {id: hold, type: gate, title: Hold, gate: {type: approval, reason: the benchmark opens the page first, required_roles: [sre], approvals: 1}}
`)
	const layers, width = 50, 10
	for l := range layers {
		for i := range width {
			after := "[hold]"
			if l > 0 {
				after = fmt.Sprintf("[n%d-%d, n%d-%d]", l-1, i, l-1, (i+1)%width)
			}
			if l == layers-1 && i == width-1 {
				continue // 1 gate + 499 jobs = 500 nodes
			}
			fmt.Fprintf(&b, "        - {id: n%d-%d, type: job, title: \"Step %d.%d\", after: %s, job: {run: {runner: sim, duration: 20ms}, outputs: {evidence: [{name: done-%d-%d, type: sim}]}}}\n",
				l, i, l, i, after, l, i)
		}
	}
	b.WriteString(`  - id: small.thing
    action: install
    target_resource_type: small
    plan:
      nodes:
        - {id: hold, type: gate, title: Hold, gate: {type: approval, reason: the dashboard is measured while these are approved, required_roles: [sre], approvals: 1}}
        - {id: a, type: job, title: A, after: [hold], job: {run: {runner: sim, duration: 200ms}, outputs: {evidence: [{name: a-done, type: sim}]}}}
`)
	return b.String()
}

// BenchmarkConsoleInABrowser measures the console in headless Chromium
// against a real server (web/console/e2e/bench.mjs): a 500-node DAG's
// first render, how long a node status event takes from the client's
// socket to the screen, and the dashboard's frame times with a thousand
// operations while their events arrive. It runs once whatever b.N is and
// reports the figures as metrics; `make bench-console` runs it.
func BenchmarkConsoleInABrowser(b *testing.B) {
	dir, node := nodeProject(b, "web/console", "playwright-core")
	chromium := chromiumPath(b)
	data := b.TempDir()
	tokens := filepath.Join(data, "tokens.yaml")
	require.NoError(b, os.WriteFile(tokens, []byte(fmt.Sprintf("tokens:\n  - {token: %q, actor: alice, organization: demo, roles: [admin]}\n  - {token: %q, actor: bob, organization: demo, roles: [sre]}\n", token, token+"-sre")), 0o600))
	packs := filepath.Join(data, "packs")
	require.NoError(b, os.MkdirAll(packs, 0o755))
	require.NoError(b, os.WriteFile(filepath.Join(packs, "bench.yaml"), []byte(benchPack()), 0o644))
	p := start(b, filepath.Join(data, "data"), "--tokens", tokens, "--packs", packs)
	wide, err := runQuiet(p, "wide", "wide")
	require.NoError(b, err)
	waitForGate(b, p, wide, "hold")

	b.ResetTimer()
	cmd := exec.Command(node, "e2e/bench.mjs")
	cmd.Dir = dir
	// A thousand operations on the dashboard, measured for ten seconds; a
	// hundred for two at make test's small size.
	operations, window := 1000, 10*time.Second
	if testenv.BenchSmall() {
		operations, window = 100, 2*time.Second
	}
	cmd.Env = append(os.Environ(), "CAPSTAN_URL="+p.url, "CAPSTAN_TOKEN="+token, "CAPSTAN_SRE_TOKEN="+token+"-sre", "CAPSTAN_OPERATION="+wide, "CHROMIUM="+chromium,
		fmt.Sprintf("CAPSTAN_BENCH_OPERATIONS=%d", operations), fmt.Sprintf("CAPSTAN_BENCH_WINDOW_MS=%d", window.Milliseconds()))
	var small []string
	var approving sync.WaitGroup
	stop := make(chan struct{})
	var refusedMu sync.Mutex
	var refused []string
	out := runBrowserScript(b, cmd, map[string]func() string{
		// A thousand small operations, started four at a time; each waits
		// at its gate.
		"START-OPERATIONS": func() string {
			var err error
			small, err = startMany(operations, func(i int) (string, error) { return runQuiet(p, "small", fmt.Sprintf("s%d", i)) })
			require.NoError(b, err)
			require.Eventually(b, func() bool {
				n := p.gql(b, `{ operations(filter: {status: WAITING}) { totalCount } }`, nil)
				return n["operations"].(map[string]any)["totalCount"].(float64) >= float64(operations)
			}, 2*time.Minute, 200*time.Millisecond)
			return "done"
		},
		// While the dashboard is measured, four people approve those gates
		// (about a hundred a second): each operation then runs and
		// succeeds, and every change moves its row.
		"APPROVE-GATES": func() string {
			ops := make(chan string)
			for range 4 {
				approving.Go(func() {
					for op := range ops {
						r, err := postQuiet(p, token+"-sre", `mutation($op: ID!) { decideGate(input: {operation: $op, node: "hold", approve: true}) { status } }`, map[string]any{"op": op})
						if err == nil && len(r.Errors) > 0 {
							err = fmt.Errorf("%v", r.Errors)
						}
						if err != nil {
							refusedMu.Lock()
							refused = append(refused, err.Error())
							refusedMu.Unlock()
						}
						time.Sleep(40 * time.Millisecond)
					}
				})
			}
			approving.Go(func() {
				defer close(ops)
				for _, op := range small {
					select {
					case ops <- op:
					case <-stop:
						return
					}
				}
			})
			return "started"
		},
	})
	close(stop)
	approving.Wait()
	b.StopTimer()
	require.Empty(b, refused, "every approval was taken")
	var figures map[string]float64
	for _, line := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(line, "FIGURES "); ok {
			require.NoError(b, json.Unmarshal([]byte(s), &figures))
		}
	}
	require.NotEmpty(b, figures, "%s", out)
	for name, v := range figures {
		b.ReportMetric(v, name)
	}
	b.Logf("%s", out)
}
