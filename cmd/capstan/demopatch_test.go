package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDemoPatch runs `make demo-patch`'s script against a real server:
// the seed's §8 story, from the failure to success on revision 2.
func TestDemoPatch(t *testing.T) {
	t.Parallel()
	p := start(t, t.TempDir())
	defer p.kill()
	text := runScript(t, "demo-patch.sh", 4*time.Minute, "CAPSTAN_URL="+p.url+"/graphql", "CAPSTAN_DEV_TOKEN="+token)
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
func combinedWithin(t *testing.T, cmd *exec.Cmd, limit time.Duration) (string, error) {
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
