package probe_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/executor/postgres"
	"github.com/capstan-dev/capstan/executor/probe"
)

type resources map[string]*capstan.Resource

func (r resources) GetResourceByKey(_ context.Context, _, key string) (*capstan.Resource, error) {
	if res, ok := r[key]; ok {
		return res, nil
	}
	return nil, capstan.Errorf(capstan.ENOTFOUND, "no resource %s", key)
}

func TestProbes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = w.Write([]byte("status: green"))
	}))
	defer srv.Close()
	p := probe.Prober{Resources: resources{"db/main": {LifecycleStatus: capstan.LifecycleActive,
		ObservedState: map[string]any{"replication": map[string]any{"lag_seconds": 0}}}}}
	target := job.ProbeTarget{Org: "o", Resource: "db/main", Dir: t.TempDir()}
	cases := []struct {
		name  string
		probe capstan.Probe
		want  string
	}{
		{"http up", capstan.Probe{Type: "http", URL: srv.URL + "/"}, capstan.EvidencePassed},
		{"http pattern", capstan.Probe{Type: "http", URL: srv.URL + "/", OutputPattern: "green$"}, capstan.EvidencePassed},
		{"http pattern miss", capstan.Probe{Type: "http", URL: srv.URL + "/", OutputPattern: "red"}, capstan.EvidenceFailed},
		{"http down", capstan.Probe{Type: "http", URL: srv.URL + "/down"}, capstan.EvidenceFailed},
		{"http expected 503", capstan.Probe{Type: "http", URL: srv.URL + "/down", ExpectStatus: 503}, capstan.EvidencePassed},
		{"http refused", capstan.Probe{Type: "http", URL: "http://127.0.0.1:1/"}, capstan.EvidenceFailed},
		{"state field", capstan.Probe{Type: "resource_state", Field: "replication.lag_seconds", Equals: 0}, capstan.EvidencePassed},
		{"state wrong value", capstan.Probe{Type: "resource_state", Field: "replication.lag_seconds", Equals: 5}, capstan.EvidenceFailed},
		{"state missing field", capstan.Probe{Type: "resource_state", Field: "replication.slots"}, capstan.EvidenceFailed},
		{"state lifecycle", capstan.Probe{Type: "resource_state", Field: "lifecycle_status", Equals: "active"}, capstan.EvidencePassed},
		{"state other resource", capstan.Probe{Type: "resource_state", Resource: "db/gone", Field: "x"}, capstan.EvidenceFailed},
		{"command exit", capstan.Probe{Type: "command", Script: "exit 3", ExpectExit: 3}, capstan.EvidencePassed},
		{"command output", capstan.Probe{Type: "command", Script: "echo ready", OutputPattern: "^ready$"}, capstan.EvidencePassed},
		{"command fails", capstan.Probe{Type: "command", Script: "false"}, capstan.EvidenceFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, source, _ := p.Run(context.Background(), c.probe, target)
			require.Equal(t, c.want, got, "%v", source)
		})
	}
}

func TestHTTPRunner(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow": // answers never: the runner's timeout ends the request
			<-r.Context().Done()
		case "/teapot":
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	defer srv.Close()
	cases := []struct {
		name, path, timeout, kind string
		expect                    int
	}{
		{"2xx", "/", "", "", 0},
		{"unexpected status", "/teapot", "", "http:418", 0},
		{"expected status", "/teapot", "", "", 418},
		{"timeout", "/slow", "100ms", "timeout", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := local.HTTPRunner{}.Run(context.Background(), job.Job{NodeID: "n", Spec: capstan.RunSpec{Runner: "http", Method: "GET",
				URL: srv.URL + c.path, Timeout: c.timeout, ExpectStatus: c.expect}})
			require.Equal(t, c.kind, res.ErrKind, "%v", res.Err)
		})
	}
}

// TestJobsDoNotSeeTheServersEnvironment: a job (and a command probe, which
// runs the same way) gets an allow-listed environment and its own
// variables; a secret in the server's environment does not reach it.
func TestJobsDoNotSeeTheServersEnvironment(t *testing.T) {
	t.Setenv("CAPSTAN_DEV_TOKEN", "server-secret-0123456789")
	dir := t.TempDir()
	res := local.ShellRunner{}.Run(context.Background(), job.Job{NodeID: "env", Dir: dir,
		Spec: capstan.RunSpec{Runner: "shell", Script: "env"}, Env: map[string]string{"CAPSTAN_PARAM_SIZE": "small"}})
	require.NoError(t, res.Err)
	out := string(res.Output)
	require.NotContains(t, out, "server-secret-0123456789")
	require.NotContains(t, out, "CAPSTAN_DEV_TOKEN")
	require.Contains(t, out, "CAPSTAN_PARAM_SIZE=small")
	require.Contains(t, out, "HOME="+dir, "the sandbox is the job's home")
}

// TestAPostgresProbeReadsItsPasswordFromTheOperationOnly: the password is
// the operation's artifact file, read for the probe (a regular file, not a
// link, not a path elsewhere, not a huge one); with it, a server that is
// not there fails the probe saying where it tried.
func TestAPostgresProbeReadsItsPasswordFromTheOperationOnly(t *testing.T) {
	outputs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outputs, "password"), []byte("0123456789abcdef\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(outputs, "huge"), bytes.Repeat([]byte("x"), 5000), 0o600))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(outputs, "link")))
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	p := probe.Prober{Remote: map[string]job.RemoteProbe{"postgres": postgres.Probe{}}}
	target := job.ProbeTarget{Outputs: outputs, Hosts: map[string]*job.Target{"db": {Resource: "compute.node/db", Address: "127.0.0.1", User: "root"}}}
	for artifact, want := range map[string]string{
		"link":      "the probe's password: artifact link:",
		"huge":      "the probe's password: artifact huge is longer than 4096 bytes",
		"../secret": `the probe's password: no artifact "../secret" in this operation's outputs`,
		"missing":   "the probe's password: artifact missing:",
		"password":  fmt.Sprintf("logging in to 127.0.0.1:%d as postgres:", port),
	} {
		result, source, _ := p.Run(context.Background(), capstan.Probe{Name: "db", Type: "postgres", Target: "db", Port: port, PasswordArtifact: artifact}, target)
		require.Equal(t, capstan.EvidenceFailed, result, artifact)
		require.Contains(t, source["note"], want, artifact)
		require.NotContains(t, fmt.Sprint(source), "0123456789abcdef", "the password is never in the evidence")
	}
}
