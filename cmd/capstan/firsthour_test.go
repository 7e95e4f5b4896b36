package main_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/testenv"
)

// The first hour of a newcomer (issue 35): `make run` and the demos take
// one set of settings, and a demo pointed anywhere else says so in a line.

// envWithout is the test's environment without the named variables, plus add.
func envWithout(drop []string, add ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range drop {
			keep = keep && name != d
		}
		if keep {
			out = append(out, kv)
		}
	}
	return append(out, add...)
}

var capstanSettings = []string{"CAPSTAN_LISTEN", "CAPSTAN_DATA_DIR", "CAPSTAN_DEV_TOKEN", "CAPSTAN_URL"}

// makeIn runs make with args in the repository's root, with env, and
// returns what it printed and its error.
func makeIn(t *testing.T, limit time.Duration, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-C", filepath.Join("..", ".."), "--no-print-directory"}, args...)...)
	cmd.Env = env
	return combinedWithin(t, cmd, limit)
}

// TestMakeRunAndTheDemosShareTheirSettings: `make run` listens on
// CAPSTAN_LISTEN and keeps its data (and dev token) in CAPSTAN_DATA_DIR;
// `make demo` with the same two variables reaches that server with that
// token and says so. Run twice, the demo says that its second install
// runs again on the prod-tempo it installed first, in place, which keeps
// the MinIO it uses. The old LISTEN and DATA are refused, not ignored.
func TestMakeRunAndTheDemosShareTheirSettings(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	dir := filepath.Join(t.TempDir(), "data")
	env := envWithout(capstanSettings, "CAPSTAN_LISTEN="+addr, "CAPSTAN_DATA_DIR="+dir)

	run := exec.Command("make", "-C", filepath.Join("..", ".."), "--no-print-directory", "run")
	run.Env = env
	logs := &testenv.SyncBuffer{} // written by the command's copiers, read here
	run.Stdout, run.Stderr = logs, logs
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // make and the server it starts
	require.NoError(t, run.Start())
	exited := make(chan struct{})
	go func() { run.Wait(); close(exited) }()
	t.Cleanup(func() { syscall.Kill(-run.Process.Pid, syscall.SIGKILL); <-exited })
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			t.Fatalf("make run ended: %s", logs.String())
		default:
		}
		require.True(t, time.Now().Before(deadline), "make run is not ready on %s: %s", addr, logs.String())
		time.Sleep(200 * time.Millisecond)
	}
	kept, err := os.ReadFile(filepath.Join(dir, "dev-token"))
	require.NoError(t, err, "the dev token is kept in CAPSTAN_DATA_DIR")
	require.Contains(t, logs.String(), strings.TrimSpace(string(kept)))

	first, err := makeIn(t, 3*time.Minute, env, "demo-sim")
	require.NoError(t, err, first)
	for _, want := range []string{"demo: against http://" + addr + "/graphql", "target  CREATE: creates tempo.instance/prod-tempo",
		"object-storage: create with minio.install@1.0.0", "operation SUCCEEDED"} {
		require.Contains(t, first, want)
	}
	second, err := makeIn(t, 3*time.Minute, env, "demo-sim")
	require.NoError(t, err, second)
	for _, want := range []string{"target  REAPPLY: tempo.instance/prod-tempo exists (active): this install runs its scenario again on it, in place (updating until it ends); it creates no second one",
		"object-storage: use minio.instance/", "operation SUCCEEDED"} {
		require.Contains(t, second, want)
	}
	started := regexp.MustCompile(`operation (\S+) started`)
	require.NotEqual(t, started.FindStringSubmatch(first)[1], started.FindStringSubmatch(second)[1], "the second install is an operation of its own")

	out, err := makeIn(t, time.Minute, env, "run", "LISTEN=127.0.0.1:1")
	require.Error(t, err)
	require.Contains(t, out, "LISTEN and DATA are not read: set CAPSTAN_LISTEN and CAPSTAN_DATA_DIR instead")
}

// TestADemoPointedElsewhereSaysSoInALine: nothing listening, another
// program on the port, a refused token and no token at all each end the
// demo with one line naming the server and what to set, never a trace.
func TestADemoPointedElsewhereSaysSoInALine(t *testing.T) {
	t.Parallel()
	p := start(t, t.TempDir())
	defer p.kill()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := closed.Addr().String()
	closed.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>not here</html>", http.StatusNotFound)
	}))
	defer other.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html>a page</html>")
	}))
	defer html.Close()
	for name, tt := range map[string]struct {
		env  []string
		says string
	}{
		"nothing listens":   {[]string{"CAPSTAN_LISTEN=" + closedAddr, "CAPSTAN_DEV_TOKEN=" + token}, "demo: http://" + closedAddr + "/graphql: no server answers"},
		"another program":   {[]string{"CAPSTAN_URL=" + other.URL + "/graphql", "CAPSTAN_DEV_TOKEN=" + token}, "HTTP 404 and no GraphQL answer: is Capstan listening there? (CAPSTAN_LISTEN, CAPSTAN_URL)"},
		"a page, not JSON":  {[]string{"CAPSTAN_URL=" + html.URL, "CAPSTAN_DEV_TOKEN=" + token}, "the answer is not GraphQL: is Capstan listening there?"},
		"a refused token":   {[]string{"CAPSTAN_URL=" + p.url + "/graphql", "CAPSTAN_DEV_TOKEN=not-this-servers-token"}, "the token was refused (401)"},
		"no token anywhere": {[]string{"CAPSTAN_URL=" + p.url + "/graphql", "CAPSTAN_DATA_DIR=" + t.TempDir()}, "demo: no token: set CAPSTAN_DEV_TOKEN"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, script := range []string{"demo-sim.sh", "demo-patch.sh"} {
				cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", script))
				cmd.Env = envWithout(capstanSettings, tt.env...)
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				require.Error(t, err, "%s: %s", script, stdout.String())
				lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
				require.Len(t, lines, 1, "%s: one line: %q", script, stderr.String())
				require.Contains(t, lines[0], tt.says, script)
				require.NotContains(t, stdout.String()+stderr.String(), "Traceback", script)
			}
		})
	}
}

// TestADedicatedProviderServesOneWorkload: on both stores, after the demo
// installed prod-tempo with a MinIO of its own, a second prod Tempo is not
// bound to that MinIO — the dedicated-storage policy names the workload
// that holds it — while prod-tempo itself, installed again, keeps it; and
// the plan says, before it starts, that this install runs again in place.
func TestADedicatedProviderServesOneWorkload(t *testing.T) {
	t.Parallel()
	for name, flags := range bothStores(t) {
		t.Run(name, func(t *testing.T) {
			p := start(t, t.TempDir(), flags...)
			defer p.kill()
			out := runScript(t, "demo-sim.sh", 3*time.Minute, "CAPSTAN_URL="+p.url+"/graphql", "CAPSTAN_DEV_TOKEN="+token)
			// The demo says, first, that its story is simulated, and marks
			// each simulated evidence item as such, never PASSED.
			require.True(t, strings.HasPrefix(out, "SIMULATED: "), "the first line says the story is simulated:\n%s", out)
			require.Regexp(t, `evidence: \d+ items, \d+ of them SIMULATED`, out)
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "span-roundtrip") || strings.Contains(line, "distributor-ready") {
					require.Contains(t, line, "SIMULATED", "a simulated probe is not reported PASSED: %q", line)
				}
			}
			minios := p.gql(t, `{ resources(filter: {type: "minio.instance", environment: "prod"}) { edges { node { key lifecycleStatus } } } }`, nil)
			var held string
			for _, e := range minios["resources"].(map[string]any)["edges"].([]any) {
				n := e.(map[string]any)["node"].(map[string]any)
				if n["lifecycleStatus"] == "ACTIVE" && strings.HasPrefix(n["key"].(string), "minio.instance/create-object-storage-") {
					held = n["key"].(string)
				}
			}
			require.NotEmpty(t, held, "the demo created a MinIO: %v", minios)

			plan := func(name string) map[string]any {
				in := p.gql(t, `mutation($n: String!) { createIntent(input: {action: "install", targetResourceType: "tempo.instance", scenario: "tempo.install@1.3.0",
				  desiredResult: {name: $n, version: "2.x"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, map[string]any{"n": name})
				return p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { status target { key effect description resource { key } }
				  summary { needsAttention }
				  bindings { key status provider { resourceKey } candidates { ref accepted reason policies { policy passed reason } } } } }`,
					map[string]any{"id": in["createIntent"].(map[string]any)["id"]})["planIntent"].(map[string]any)
			}
			storage := func(plan map[string]any) (map[string]any, map[string]any) {
				for _, b := range plan["bindings"].([]any) {
					b := b.(map[string]any)
					if b["key"] != "object-storage" {
						continue
					}
					for _, c := range b["candidates"].([]any) {
						if c.(map[string]any)["ref"] == held {
							return b, c.(map[string]any)
						}
					}
					t.Fatalf("%s is no candidate: %v", held, b)
				}
				t.Fatalf("no object-storage binding: %v", plan)
				return nil, nil
			}

			other := plan("prod-tempo-2")
			require.Equal(t, "READY", other["status"])
			binding, verdict := storage(other)
			require.Equal(t, "PENDING_SUB_OPERATION", binding["status"], "a MinIO of its own: %v", binding)
			require.Equal(t, false, verdict["accepted"])
			require.Equal(t, "rejected by policy prod-object-storage-dedicated: Production object storage must be dedicated to one workload: it already serves tempo.instance/prod-tempo.", verdict["reason"])
			require.Equal(t, "CREATE", other["target"].(map[string]any)["effect"])
			require.Nil(t, other["target"].(map[string]any)["resource"])

			again := plan("prod-tempo")
			binding, verdict = storage(again)
			require.Equal(t, "RESOLVED", binding["status"])
			require.Equal(t, held, binding["provider"].(map[string]any)["resourceKey"], "re-applying keeps its own MinIO")
			require.Contains(t, verdict["policies"], map[string]any{"policy": "prod-object-storage-dedicated", "passed": true, "reason": "prod-object-storage-dedicated: satisfied"})
			target := again["target"].(map[string]any)
			require.Equal(t, "REAPPLY", target["effect"])
			require.Equal(t, map[string]any{"key": "tempo.instance/prod-tempo"}, target["resource"])
			require.Contains(t, again["summary"].(map[string]any)["needsAttention"], target["description"], "a person sees it before starting")
		})
	}
}
