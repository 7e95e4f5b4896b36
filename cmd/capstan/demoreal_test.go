package main_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDemoReal runs `make demo-real`'s script, on both stores: three test
// hosts, linux-service installed on each, a config edited by hand, the
// drift found with its diff, a repair approved by a second person, the
// host healthy again, and everything it made removed.
func TestDemoReal(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatal("the real-targets demo needs root (network namespaces); CI runs as root")
	}
	for store, args := range bothStores(t) {
		t.Run(store, func(t *testing.T) {
			t.Parallel() // each run of the script brings up hosts of its own
			text := runScript(t, "demo-real.sh", 4*time.Minute, "CAPSTAN_BIN="+binary, "CAPSTAN_SERVE_FLAGS="+strings.Join(args, " "))
			for _, want := range []string{
				"hello-h1: SUCCEEDED (config-written passed on compute.node/h1", "hello-h3: SUCCEEDED",
				"hello-h1: DRIFTED - drifted: config_sha256 differ from the desired state",
				"config_sha256 desired 217b4b212d97c7401091aca4a9d24c27506d61ac58b972eb9395fc36b0b50c84 observed ",
				"probe config failed on compute.node/h1", "hello-h2: HEALTHY (untouched)",
				"plan READY from linux-service.repair@1.1.0", "still as edited while the repair waits", "approved by sam (sre)",
				"repair SUCCEEDED", "   hello-h1: HEALTHY", "/etc/hello/hello.conf on h1: port = 8080 version = 1.0.0",
				"OK: installed on 3 hosts"} {
				require.True(t, strings.Contains(text, want), "%q missing from:\n%s", want, text)
			}
		})
	}
}
