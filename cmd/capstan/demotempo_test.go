package main_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/kubetest"
)

// TestDemoOnTheCluster runs `make demo`'s script as root, the seed's story
// for real, on both stores: Tempo's chart on the test cluster, a
// dedicated S3 server a sub-operation starts on a test host over SSH
// (the shared one fails the prod policy), a second person's approvals,
// and evidence read from the cluster and the S3 server, none simulated.
func TestDemoOnTheCluster(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	for store, args := range bothStores(t) {
		t.Run(store, func(t *testing.T) {
			text := runScript(t, "demo-tempo-kube.sh", 5*time.Minute, "CAPSTAN_BIN="+binary, "CAPSTAN_KUBECONFIG="+c.Kubeconfig,
				"CAPSTAN_SERVE_FLAGS="+strings.Join(args, " "))
			require.True(t, strings.HasPrefix(text, "REAL: "), "the real story says so on its first line:\n%s", text)
			for _, want := range []string{
				"plan tempo.install@2.0.0: READY",
				"object-storage: create with minio.install@2.0.0",
				"approved approve-storage of minio.install@2.0.0", "approved approve-rollout of tempo.install@2.0.0",
				"4. operation SUCCEEDED", "0 simulated",
				"bucket-writable          PASSED  http://10.", "PUT, GET and DELETE of capstan-probe/",
				"distributor-ready        PASSED  Deployment", "1/1 updated, 1 available",
				"otlp-endpoints           PASSED  Service", "1 ready endpoints",
				"runs on compute.node/prod-storage-1", "keys by reference: secret:operations/",
				"OK: Tempo's chart is installed",
			} {
				require.True(t, strings.Contains(text, want), "%q missing from:\n%s", want, text)
			}
		})
	}
}

// TestDemoWithoutRootSaysItIsSimulated runs `make demo`'s script as
// nobody: it cannot make a test host, says so on its first line and
// tells the simulated story against the running server.
func TestDemoWithoutRootSaysItIsSimulated(t *testing.T) {
	t.Parallel()
	p := start(t, t.TempDir())
	defer p.kill()
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "demo.sh"))
	require.NoError(t, err)
	cmd := exec.Command("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "bash", script)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "CAPSTAN_URL=" + p.url + "/graphql", "CAPSTAN_DEV_TOKEN=" + token}
	out, err := combinedWithin(t, cmd, 3*time.Minute)
	require.NoError(t, err, out)
	require.True(t, strings.HasPrefix(out, "SIMULATED: not root"), "the first line says why:\n%s", out)
	for _, want := range []string{"plan    READY", "object-storage: create with minio.install@1.0.0", "operation SUCCEEDED", "SIMULATED (nothing real was checked)"} {
		require.True(t, strings.Contains(out, want), "%q missing from:\n%s", want, out)
	}
}
