package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/internal/kubetest"
	"github.com/capstan-dev/capstan/internal/neo4jtest"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "capstan-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "capstan")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build failed: %v\n%s", err, out)
		os.Exit(1)
	}
	code := kubetest.Main(m) // stops the test cluster when this process started one
	os.RemoveAll(dir)
	os.Exit(code)
}

const token = "process-test-token-0123456789"

// testSecretKey seals the secrets of every test server on Neo4j.
var testSecretKey = base64.StdEncoding.EncodeToString([]byte("capstan-test-secret-key-32-bytes"))

// bothStores gives the flags that put a server on each store, each with
// extra: the embedded store (in the data directory the test gives it)
// and the suite's real Neo4j.
//
// It holds one of the run's Neo4j servers until the test ends. A test
// whose subtests then wait for a parallel slot holds a server while
// others hold slots waiting for a server: with as many such tests as
// servers the run deadlocks (it did, once there were five). So its
// subtests run one after the other unless each needs minutes (three do:
// TestDemoReal, TestRemoteFaultsOnBothStores, TestTrustOnFirstUseIsAudited);
// keep those fewer than the servers withneo4j starts (5).
func bothStores(t *testing.T, extra ...string) map[string][]string {
	t.Helper()
	db, err := neo4jtest.Start(context.Background())
	require.NoError(t, err, "Neo4j is part of the test suite")
	t.Cleanup(func() { db.Close() })
	// Each store's servers get job uids of their own (launch gives its
	// servers theirs; a script's server takes these).
	embedded := append([]string{"--job-uid-base", fmt.Sprint(nextJobUIDBase())}, extra...)
	onNeo4j := append([]string{"--job-uid-base", fmt.Sprint(nextJobUIDBase())}, extra...)
	return map[string][]string{"embedded": embedded, "neo4j": append(onNeo4j, "--store", "neo4j", "--neo4j-uri", db.URI)}
}

// proc is a running `capstan serve`.
type proc struct {
	cmd  *exec.Cmd
	url  string
	logs *bytes.Buffer
	mu   *sync.Mutex
	done chan struct{}
}

var listening = regexp.MustCompile(`"addr":"(http://[^"]+)"`)

func start(t testing.TB, dataDir string, extra ...string) *proc {
	t.Helper()
	p := launch(t, dataDir, extra...)
	p.waitReady(t, 60*time.Second)
	return p
}

// launch starts `capstan serve` and waits until it listens (not until ready).
// The crash, soak and walk-through tests poll as fast as they can, so the
// per-token rate limits are off unless extra turns them on (the attack
// suite runs with the defaults).
func launch(t testing.TB, dataDir string, extra ...string) *proc {
	t.Helper()
	return launchWith(t, nil, dataDir, extra...)
}

// launchWith is launch with prepare changing the command first (another
// binary, another user).
func launchWith(t testing.TB, prepare func(*exec.Cmd), dataDir string, extra ...string) *proc {
	t.Helper()
	args := []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--rate-limit", "0", "--cost-rate-limit", "0", "--subscription-limit", "0"}
	if !slices.Contains(extra, "--job-uid-base") {
		args = append(args, "--job-uid-base", fmt.Sprint(nextJobUIDBase()))
	}
	args = append(args, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "CAPSTAN_DEV_TOKEN="+token)
	if slices.Contains(extra, "neo4j") {
		// Processes on one database share its secrets, sealed with one
		// key: every test's servers are replicas of one deployment.
		cmd.Env = append(cmd.Env, "CAPSTAN_SECRET_KEY="+testSecretKey)
	}
	if prepare != nil {
		prepare(cmd)
	}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &proc{cmd: cmd, logs: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.logs.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		// Every line is read before Wait, which closes the pipe.
		cmd.Wait()
		close(p.done)
	}()
	// After the kill (cleanups run last first): what a killed server
	// left in its job directory, outside the test's temporary directory.
	t.Cleanup(func() { os.RemoveAll(jobsOf(dataDir)) })
	t.Cleanup(func() { p.kill() })
	// Before the kill: a failed test shows what its server said last.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the server of %s said last:\n%s", dataDir, lastLines(p.output(), serverLogLines))
		}
	})
	select {
	case p.url = <-urls:
	case <-p.done:
		t.Fatalf("capstan exited before listening:\n%s", p.output())
	case <-time.After(30 * time.Second):
		t.Fatalf("capstan did not start:\n%s", p.output())
	}
	return p
}

// launches counts the servers the tests launched, to give each its own
// job uids: servers running at once (tests run in parallel) never share
// one, as two servers of a deployment on one machine must not.
var launches atomic.Int64

// nextJobUIDBase is the first of a new server's 128 job uids.
func nextJobUIDBase() int64 { return 100000 + 128*(launches.Add(1)%500) }

// withEnv adds variables to a server's environment (launchWith's
// prepare): never t.Setenv, which would reach every server the tests
// running in parallel launch meanwhile.
func withEnv(vars ...string) func(*exec.Cmd) {
	return func(cmd *exec.Cmd) { cmd.Env = append(cmd.Env, vars...) }
}

// jobsOf is the job directory of the server whose data directory is data
// (when it is not given --job-dir): the operations' sandboxes and outputs.
func jobsOf(data string) string {
	return executor.DefaultJobDir(filepath.Join(data, "executor"))
}

// waitReady polls /readyz until it answers 200.
func (p *proc) waitReady(t testing.TB, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, err := http.Get(p.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("capstan exited before it was ready:\n%s", p.output())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("capstan was not ready within %v:\n%s", within, p.output())
}

// serverLogLines is how many of its last log lines each server of a
// failed test shows.
const serverLogLines = 25

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

func (p *proc) kill() {
	select {
	case <-p.done:
	default:
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

func (p *proc) stop(t testing.TB) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Fatal("capstan did not stop on SIGTERM")
	}
	require.Equal(t, 0, p.cmd.ProcessState.ExitCode(), p.output())
	require.Contains(t, p.output(), "shutting down")
}

func (p *proc) gql(t testing.TB, query string, vars map[string]any) map[string]any {
	t.Helper()
	data, errs := p.try(t, query, vars)
	require.Empty(t, errs)
	return data
}

// try runs a GraphQL request and returns its data and errors.
func (p *proc) try(t testing.TB, query string, vars map[string]any) (map[string]any, []map[string]any) {
	t.Helper()
	return p.tryAs(t, token, query, vars)
}

// tryAs is try with another bearer token.
func (p *proc) tryAs(t testing.TB, bearer, query string, vars map[string]any) (map[string]any, []map[string]any) {
	t.Helper()
	r := postAs(t, p, bearer, query, vars)
	return r.Data, r.Errors
}

// gqlReply is one GraphQL response over HTTP: its status and headers, the
// decoded data and errors, and the body as it came.
type gqlReply struct {
	status int
	header http.Header
	raw    []byte
	Data   map[string]any
	Errors []map[string]any
}

// postAs sends one GraphQL request with a bearer token.
func postAs(t testing.TB, p *proc, bearer, query string, vars map[string]any) gqlReply {
	t.Helper()
	out, err := postQuiet(p, bearer, query, vars)
	require.NoError(t, err)
	return out
}

// postQuiet is postAs for goroutines other than the test's: it returns
// what went wrong instead of failing the test.
func postQuiet(p *proc, bearer, query string, vars map[string]any) (gqlReply, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, p.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+bearer)
	return sendGQL(req)
}

func doGQL(t testing.TB, req *http.Request) gqlReply {
	t.Helper()
	out, err := sendGQL(req)
	require.NoError(t, err)
	return out
}

func sendGQL(req *http.Request) (gqlReply, error) { return sendGQLWith(http.DefaultClient, req) }

// sendGQLWith sends req through client (one with a timeout, say).
func sendGQLWith(client *http.Client, req *http.Request) (gqlReply, error) {
	resp, err := client.Do(req)
	if err != nil {
		return gqlReply{}, err
	}
	defer resp.Body.Close()
	out := gqlReply{status: resp.StatusCode, header: resp.Header}
	if out.raw, err = io.ReadAll(resp.Body); err != nil {
		return out, err
	}
	if err := json.Unmarshal(out.raw, &out); err != nil {
		return out, fmt.Errorf("%w: %s", err, out.raw)
	}
	return out, nil
}

func (p *proc) readyz(t testing.TB) int {
	t.Helper()
	resp, err := http.Get(p.url + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

const createIntent = `mutation($n: String!) { createIntent(input: {action: "install", targetResourceType: "tempo.instance", scenario: "tempo.install@1.3.0",
  desiredResult: {name: $n}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`

func TestRestartKeepsEverything(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := start(t, dir)
	id := p.gql(t, createIntent, map[string]any{"n": "one"})["createIntent"].(map[string]any)["id"]
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status bindings { key reason } } }`, map[string]any{"id": id})
	p.stop(t)

	again := start(t, dir)
	require.NotContains(t, again.output(), "demo catalog imported", "the demo catalog goes only into an empty store")
	got := again.gql(t, `query($id: ID!) { intent(id: $id) { status latestPlan { id status bindings { key reason } } } }`, map[string]any{"id": id})
	intent := got["intent"].(map[string]any)
	require.Equal(t, "PLANNED", intent["status"])
	require.Equal(t, plan["planIntent"].(map[string]any)["bindings"], intent["latestPlan"].(map[string]any)["bindings"])
	resp, err := http.Get(again.url + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
}

// TestSIGKILLLosesNothingAcknowledged writes intents as fast as it can from
// several clients, kills the server with SIGKILL in the middle, and checks
// that every intent whose creation was acknowledged is there after restart.
func TestSIGKILLLosesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := start(t, dir)
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body, _ := json.Marshal(map[string]any{"query": createIntent, "variables": map[string]any{"n": fmt.Sprintf("w%d-%d", w, i)}})
				req, _ := http.NewRequest(http.MethodPost, p.url+"/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return // the server is gone
				}
				var out struct {
					Data struct{ CreateIntent struct{ ID string } }
				}
				err = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if err == nil && out.Data.CreateIntent.ID != "" {
					mu.Lock()
					acked = append(acked, out.Data.CreateIntent.ID)
					mu.Unlock()
				}
			}
		}(w)
	}
	// Killed in the middle of the writes, once fifty were acknowledged.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 50
	}, 30*time.Second, 5*time.Millisecond, "fifty writes acknowledged")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
	close(stop)
	wg.Wait()
	require.NotEmpty(t, acked, "some writes were acknowledged before the kill")

	again := start(t, dir)
	ids := map[string]bool{}
	var after *string
	for {
		data := again.gql(t, `query($after: String) { intents(first: 500, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`, map[string]any{"after": after})
		conn := data["intents"].(map[string]any)
		for _, e := range conn["edges"].([]any) {
			ids[e.(map[string]any)["node"].(map[string]any)["id"].(string)] = true
		}
		info := conn["pageInfo"].(map[string]any)
		if info["hasNextPage"] != true {
			break
		}
		c := info["endCursor"].(string)
		after = &c
	}
	for _, id := range acked {
		require.True(t, ids[id], "acknowledged intent %s was lost", id)
	}
	t.Logf("%d acknowledged intents survived SIGKILL (%d stored)", len(acked), len(ids))
}

func TestPackLintCommand(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("id: bad\nversion: 1.0\nscenarios:\n  - id: x\n    action: install\n    target_resource_type: t\n    plan:\n      nodes:\n        - {id: a, type: job, title: A}\n"), 0o600))
	out, err := exec.Command(binary, "pack", "lint", bad).CombinedOutput()
	require.Error(t, err)
	require.Equal(t, 1, err.(*exec.ExitError).ExitCode())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Equal(t, []string{
		bad + ":2: at /version: got number, want string",
		bad + ":9: at /scenarios/0/plan/nodes/0: missing property 'job'",
	}, lines)

	out, err = exec.Command(binary, "pack", "lint", "../../packs/tempo", "../../packs/kubernetes").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "ok: tempo@2.0.0")

	out, err = exec.Command(binary, "version").CombinedOutput()
	require.NoError(t, err)
	require.Contains(t, string(out), "capstan")
}

// stacks has p print its goroutines (SIGQUIT: the Go runtime's dump, after
// which the process ends) and returns those with a frame in one of
// the packages named: what a process that stopped doing something was
// doing instead. For a failure's message only.
func (p *proc) stacks(packages ...string) string {
	if err := p.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		return fmt.Sprintf("(no goroutine dump: %v)", err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		return "(no goroutine dump within 30 s)"
	}
	var kept []string
	for _, g := range strings.Split(p.output(), "\n\n") {
		if !strings.HasPrefix(g, "goroutine ") {
			continue
		}
		for _, pkg := range packages {
			if strings.Contains(g, "capstan/"+pkg+".") {
				kept = append(kept, g)
				break
			}
		}
	}
	return strings.Join(kept, "\n\n")
}
