package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// probeTimeout bounds one probe of real state.
const probeTimeout = time.Minute

// Probes are the probes of real state on target hosts, by type, for
// probe.Prober.Remote: tcp (a port answers), ssh_command (a command's
// exit code and output), file (exists, with checksum, owner and mode)
// and service (a process is running, by its pidfile). dial is the
// egress allow-list's.
func Probes(pool *Pool, dial func(ctx context.Context, network, address string) (net.Conn, error)) map[string]job.RemoteProbe {
	return map[string]job.RemoteProbe{
		"tcp":         tcpProbe{dial: dial},
		"ssh_command": commandProbe{pool: pool},
		"file":        fileProbe{pool: pool},
		"service":     serviceProbe{pool: pool},
	}
}

type tcpProbe struct {
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

func (p tcpProbe) Probe(ctx context.Context, pr capstan.Probe, t *job.Target) (string, map[string]any, []byte) {
	source := map[string]any{"port": pr.Port}
	if pr.Port < 1 || pr.Port > 65535 {
		source["note"] = "the probe names no port"
		return capstan.EvidenceFailed, source, nil
	}
	if p.dial == nil {
		source["error_kind"], source["note"] = KindUnreachable, "no dialer: the server's egress allow-list is not set"
		return capstan.EvidenceFailed, source, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	began := time.Now()
	c, err := p.dial(ctx, "tcp", net.JoinHostPort(t.Address, strconv.Itoa(pr.Port)))
	if errors.Is(err, syscall.ECONNREFUSED) { // the host answered: nothing listens there
		source["connected"], source["note"] = false, "connection refused: nothing listens on the port"
		return capstan.EvidenceFailed, source, nil
	}
	if err != nil {
		source["error_kind"], source["note"] = KindUnreachable, capstan.ErrorMessage(err)
		return capstan.EvidenceFailed, source, nil
	}
	c.Close()
	source["connected"], source["elapsed_ms"] = true, time.Since(began).Milliseconds()
	return capstan.EvidencePassed, source, nil
}

// exec runs a probe's script on its target; a failure to reach it fails
// the probe, saying how (error_kind: unreachable, host_key, auth,
// connection_lost).
func probeExec(ctx context.Context, pool *Pool, t *job.Target, source map[string]any, script string, args ...string) (ExecResult, bool) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	res := pool.Exec(ctx, t, Command{Script: script, Args: args})
	if res.Err != nil {
		kind := ErrorKind(res.Err)
		if kind == "" {
			kind = "timeout"
		}
		source["error_kind"], source["note"] = kind, res.Err.Error()
		return res, false
	}
	return res, true
}

type commandProbe struct{ pool *Pool }

func (p commandProbe) Probe(ctx context.Context, pr capstan.Probe, t *job.Target) (string, map[string]any, []byte) {
	source := map[string]any{"command": pr.Script}
	res, ok := probeExec(ctx, p.pool, t, source, pr.Script)
	if !ok {
		return capstan.EvidenceFailed, source, res.Output
	}
	source["exit_code"] = res.ExitCode
	if res.ExitCode != pr.ExpectExit {
		return capstan.EvidenceFailed, source, res.Output
	}
	if pr.OutputPattern != "" {
		re, err := regexp.Compile(pr.OutputPattern)
		matched := err == nil && re.MatchString(strings.TrimSpace(string(res.Output)))
		source["matched"] = matched
		if !matched {
			return capstan.EvidenceFailed, source, res.Output
		}
	}
	return capstan.EvidencePassed, source, res.Output
}

type fileProbe struct{ pool *Pool }

// fileScript prints a file's owner, mode and SHA-256, or exits 3 when it
// is not a regular file.
const fileScript = `[ -f "$1" ] || exit 3; stat -c '%U %a' -- "$1" && sha256sum -- "$1" | cut -d' ' -f1`

func (p fileProbe) Probe(ctx context.Context, pr capstan.Probe, t *job.Target) (string, map[string]any, []byte) {
	source := map[string]any{"path": pr.Path}
	if pr.Path == "" {
		source["note"] = "the probe names no path"
		return capstan.EvidenceFailed, source, nil
	}
	res, ok := probeExec(ctx, p.pool, t, source, fileScript, pr.Path)
	if !ok {
		return capstan.EvidenceFailed, source, nil
	}
	if res.ExitCode == 3 {
		source["exists"] = false
		return capstan.EvidenceFailed, source, nil
	}
	f := strings.Fields(string(res.Output))
	if res.ExitCode != 0 || len(f) != 3 {
		source["note"] = fmt.Sprintf("stat and sha256sum exited %d", res.ExitCode)
		return capstan.EvidenceFailed, source, res.Output
	}
	observed := map[string]string{"owner": f[0], "mode": f[1], "sha256": f[2]}
	source["exists"], source["owner"], source["mode"], source["sha256"] = true, f[0], f[1], f[2]
	var mismatched []string
	for field, want := range map[string]string{"owner": pr.Owner, "mode": normalMode(pr.Mode), "sha256": strings.ToLower(pr.SHA256)} {
		if want != "" && want != normalModeIf(field, observed[field]) {
			mismatched = append(mismatched, field)
			source["expected_"+field] = want
		}
	}
	if len(mismatched) > 0 {
		source["mismatched"] = mismatched
		return capstan.EvidenceFailed, source, nil
	}
	return capstan.EvidencePassed, source, nil
}

// normalMode writes a mode without leading zeros (0644 and 644 are one).
func normalMode(m string) string {
	if m == "" {
		return ""
	}
	if t := strings.TrimLeft(m, "0"); t != "" {
		return t
	}
	return "0"
}

func normalModeIf(field, v string) string {
	if field == "mode" {
		return normalMode(v)
	}
	return v
}

type serviceProbe struct{ pool *Pool }

// serviceScript prints the command name of the live process whose id
// the pidfile holds; 3: no pidfile, 4: no such process.
const serviceScript = `pid=$(cat -- "$1" 2>/dev/null) || exit 3; case "$pid" in ''|*[!0-9]*) exit 3;; esac; kill -0 "$pid" 2>/dev/null || [ -d "/proc/$pid" ] || exit 4; echo "$pid"; cat "/proc/$pid/comm"`

func (p serviceProbe) Probe(ctx context.Context, pr capstan.Probe, t *job.Target) (string, map[string]any, []byte) {
	source := map[string]any{"pidfile": pr.Pidfile}
	if pr.Pidfile == "" {
		source["note"] = "the probe names no pidfile"
		return capstan.EvidenceFailed, source, nil
	}
	res, ok := probeExec(ctx, p.pool, t, source, serviceScript, pr.Pidfile)
	if !ok {
		return capstan.EvidenceFailed, source, nil
	}
	switch res.ExitCode {
	case 3:
		source["running"], source["note"] = false, "no pidfile holding a process id"
		return capstan.EvidenceFailed, source, nil
	case 4:
		source["running"], source["note"] = false, "no process with the pidfile's id"
		return capstan.EvidenceFailed, source, nil
	}
	f := strings.Fields(string(res.Output))
	if res.ExitCode != 0 || len(f) < 2 {
		source["note"] = fmt.Sprintf("reading the process exited %d", res.ExitCode)
		return capstan.EvidenceFailed, source, res.Output
	}
	source["running"], source["pid"], source["process"] = true, f[0], f[1]
	if pr.Process != "" && pr.Process != f[1] {
		source["expected_process"] = pr.Process
		return capstan.EvidenceFailed, source, nil
	}
	return capstan.EvidencePassed, source, nil
}
