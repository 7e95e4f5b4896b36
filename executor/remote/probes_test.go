package remote_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/probe"
	"github.com/capstan-dev/capstan/executor/remote"
	"github.com/capstan-dev/capstan/internal/testhosts"
)

// TestProbesOfRealState checks a real file, process, port and HTTP
// endpoint on a test host, and records where each was observed.
func TestProbesOfRealState(t *testing.T) {
	hosts := testhosts.Start(t, 1)
	pool := remote.NewPool(remote.Config{Dial: dialer})
	defer pool.Close()
	target := targetOf(hosts, 0)
	content := "listen = 8080\n"
	setup := `set -e
mkdir -p /srv/www && printf '%s' "$1" > /srv/app.conf && chmod 640 /srv/app.conf
echo '{"status": {"phase": "ready", "replicas": [1, 2]}}' > /srv/www/status.json
(cd /srv/www && exec setsid python3 -m http.server --bind "$2" 8080) >/dev/null 2>&1 < /dev/null &
echo $! > /run/app.pid
for i in $(seq 1 100); do (exec 3<>/dev/tcp/$2/8080) 2>/dev/null && exit 0; sleep 0.05; done; exit 1`
	res := pool.Exec(context.Background(), target, remote.Command{Script: setup, Args: []string{content, target.Address}})
	require.NoError(t, res.Err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Output)
	sum := sha256.Sum256([]byte(content))
	prober := probe.Prober{Client: http.DefaultClient, Remote: remote.Probes(pool, dialer)}
	in := job.ProbeTarget{Hosts: map[string]*job.Target{"host": target},
		Desired: map[string]any{"config_sha256": hex.EncodeToString(sum[:]), "running": true, "phase": "degraded"}}
	for _, c := range []struct {
		probe    capstan.Probe
		result   string
		observed map[string]any
	}{
		{capstan.Probe{Type: "tcp", Port: 8080}, capstan.EvidencePassed, map[string]any{"connected": true}},
		{capstan.Probe{Type: "tcp", Port: 8081}, capstan.EvidenceFailed, map[string]any{"connected": false}},
		{capstan.Probe{Type: "file", Path: "/srv/app.conf", SHA256: hex.EncodeToString(sum[:]), Owner: "root", Mode: "0640"}, capstan.EvidencePassed, map[string]any{"mode": "640"}},
		{capstan.Probe{Type: "file", Path: "/srv/app.conf", SHA256: strings.Repeat("0", 64), Mode: "644"}, capstan.EvidenceFailed, map[string]any{"mismatched": []string{"mode", "sha256"}}},
		{capstan.Probe{Type: "file", Path: "/srv/none.conf"}, capstan.EvidenceFailed, map[string]any{"exists": false}},
		{capstan.Probe{Type: "service", Pidfile: "/run/app.pid", Process: "python3"}, capstan.EvidencePassed, map[string]any{"running": true}},
		{capstan.Probe{Type: "service", Pidfile: "/run/app.pid", Process: "nginx"}, capstan.EvidenceFailed, map[string]any{"process": "python3"}},
		{capstan.Probe{Type: "service", Pidfile: "/run/none.pid"}, capstan.EvidenceFailed, map[string]any{"running": false}},
		{capstan.Probe{Type: "ssh_command", Script: "cat /srv/app.conf", OutputPattern: "^listen = 8080$"}, capstan.EvidencePassed, map[string]any{"exit_code": 0}},
		{capstan.Probe{Type: "ssh_command", Script: "exit 2", ExpectExit: 2}, capstan.EvidencePassed, map[string]any{"exit_code": 2}},
		{capstan.Probe{Type: "http", URL: "http://${target.address}:8080/status.json", JSONPath: "$.status.phase", Equals: "ready"}, capstan.EvidencePassed, map[string]any{"observed": "ready"}},
		{capstan.Probe{Type: "http", URL: "http://${target.address}:8080/status.json", JSONPath: "$.status.replicas.1", Equals: 3}, capstan.EvidenceFailed, map[string]any{"observed": float64(2)}},
		// A probe that observes a desired-state field checks its value
		// against the desired state it is given.
		{capstan.Probe{Type: "file", Path: "/srv/app.conf", Observes: "config_sha256"}, capstan.EvidencePassed, map[string]any{"observed": hex.EncodeToString(sum[:]), "observes": "config_sha256"}},
		{capstan.Probe{Type: "service", Pidfile: "/run/app.pid", Observes: "running"}, capstan.EvidencePassed, map[string]any{"observed": true, "desired": true}},
		{capstan.Probe{Type: "http", URL: "http://${target.address}:8080/status.json", JSONPath: "$.status.phase", Observes: "phase"}, capstan.EvidenceFailed, map[string]any{"observed": "ready", "desired": "degraded"}},
		{capstan.Probe{Type: "ssh_command", Script: "echo 7", Observes: "replicas"}, capstan.EvidenceInconclusive, map[string]any{"observed": "7", "note": "no desired state declares replicas"}},
	} {
		c.probe.Name, c.probe.Target = c.probe.Type, "host"
		result, source, _ := prober.Run(context.Background(), c.probe, in)
		require.Equal(t, c.result, result, "%+v: %v", c.probe, source)
		require.Equal(t, "compute.node/h1", source["host"], "where it was observed")
		require.Equal(t, target.Address, source["address"])
		for k, v := range c.observed {
			if want, ok := v.([]string); ok {
				require.ElementsMatch(t, want, source[k], "%v", source)
				continue
			}
			require.Equal(t, v, source[k], "%+v: %v", c.probe, source)
		}
	}
	result, source, _ := prober.Run(context.Background(), capstan.Probe{Name: "x", Type: "file", Target: "elsewhere", Path: "/etc/passwd"}, in)
	require.Equal(t, capstan.EvidenceFailed, result)
	require.Contains(t, source["note"], "not a host bound to this node")
}
