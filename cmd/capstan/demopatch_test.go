package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/kubecluster"
	"github.com/capstan-dev/capstan/internal/kubetest"
)

// TestDemoPatch runs `make demo-patch-sim`'s script against a real
// server: the seed's §8 story as a kubeadm cluster create (jobs
// simulated), from the failure to success on revision 2.
func TestDemoPatch(t *testing.T) {
	t.Parallel()
	p := start(t, t.TempDir())
	defer p.kill()
	text := runScript(t, "demo-patch.sh", 4*time.Minute, "CAPSTAN_URL="+p.url+"/graphql", "CAPSTAN_DEV_TOKEN="+token)
	require.True(t, strings.HasPrefix(text, "SIMULATED: "), "the simulated story says so on its first line:\n%s", text)
	for _, want := range []string{"analysis  by ai-agent:rules", "missing   network.registry_access on compute.node/prod-worker-3",
		"proposes  INSERT_AFTER install-containerd configure-registry-mirror", "proposes  RETRY init-control-plane",
		"approved by dev-sre: PROPOSED revision None (prod-second-person needs 1 more)", "approved by dev-sre2: APPLIED revision 2", "operation SUCCEEDED on revision 2", "+ node configure-registry-mirror from kubernetes@1.5.0/configure-registry-mirror"} {
		require.True(t, strings.Contains(text, want), "%q missing from:\n%s", want, text)
	}
}

// runScript runs scripts/<name> with env added to the test's, fails the
// test when it fails or outlives limit, and returns what it printed.
func runScript(t *testing.T, name string, limit time.Duration, env ...string) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", name))
	cmd.Env = append(os.Environ(), env...)
	out, err := combinedWithin(t, cmd, limit)
	require.NoError(t, err, "%s", out)
	return out
}

// combinedWithin runs cmd and returns what it printed and how it ended;
// one that outlives limit is killed and fails the test.
func combinedWithin(t testing.TB, cmd *exec.Cmd, limit time.Duration) (string, error) {
	t.Helper()
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not finish within %s: %s", cmd.Args, limit, out)
	}
	return string(out), err
}

// TestDemoPatchOnTheCluster runs `make demo-patch`'s script, the seed's
// §8 story on a real Kubernetes API, on both stores: the pod kwok
// schedules on worker-3 cannot pull its image; the step fails with each
// pod's reason read from the cluster; the rule analyzer proposes keeping
// the app off worker-3; two SREs approve; the patched plan rolls out on
// the other nodes. A cluster of its own (both stores' runs share it, each
// app spread over its three nodes): the story needs exactly the seed's
// three nodes, and other tests add nodes to the shared one.
func TestDemoPatchOnTheCluster(t *testing.T) {
	t.Parallel()
	c := kubetest.Private(t, kubecluster.Options{})
	for store, args := range bothStores(t) {
		t.Run(store, func(t *testing.T) {
			text := runScript(t, "demo-patch-kube.sh", 4*time.Minute, "CAPSTAN_BIN="+binary, "CAPSTAN_KUBECONFIG="+c.Kubeconfig,
				"CAPSTAN_SERVE_FLAGS="+strings.Join(args, " "))
			for _, want := range []string{
				"nodes: worker-1 worker-2 worker-3", "plan kubernetes.app.create@1.5.0",
				"ErrImagePull: failed to pull image \"registry.internal/web:1.0\": the node cannot reach its registry",
				"analysis  by ai-agent:rules: The pods scheduled on node worker-3 cannot pull the app's image (ErrImagePull)",
				"missing   network.registry_access", `proposes  SET_PARAMETERS apply-app {"avoid_node": "worker-3"}`, "proposes  RETRY apply-app",
				"approved by sre: PROPOSED revision None (prod-second-person needs 1 more)", "approved by sre2: APPLIED revision 3",
				"operation SUCCEEDED on revision 3", "evidence deployment-web-not-ready FAILED: pod web-", "evidence rolled-out PASSED: 3/3 updated, 3 available",
				"OK: the pods on worker-3 could not pull"} {
				require.True(t, strings.Contains(text, want), "%q missing from:\n%s", want, text)
			}
			live := text[strings.Index(text, "   live: "):]
			require.NotContains(t, live[:strings.Index(live, "\n")], "worker-3", "no pod on worker-3 once patched")
			proof := text[strings.Index(text, "evidence rolled-out PASSED"):]
			require.NotContains(t, proof[:strings.Index(proof, "\n")], "worker-3", "the evidence shows the pods Ready on the other nodes")
		})
	}
}
