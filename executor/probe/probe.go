// Package probe runs evidence probes — command (in the job sandbox), http
// (through the egress allow-list), resource_state, capability and sim —
// and the remote ones (executor/remote) by type: the one place a probe
// is run, for the executor and the assessor alike.
package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/executor/local"
)

// Prober runs evidence probes: command, http, resource_state and sim.
type Prober struct {
	// Resources reads observed state for resource_state probes.
	Resources interface {
		GetResourceByKey(ctx context.Context, org, key string) (*capstan.Resource, error)
	}
	Client *http.Client
	// Sandbox confines command probes as it does shell jobs.
	Sandbox *local.Sandbox
	// Remote checks real state on target hosts, by probe type (tcp,
	// ssh_command, file, service: executor/remote).
	Remote map[string]job.RemoteProbe
}

// Run runs one probe and returns its verdict, what it observed, and the
// raw output of a command or the body of an http response: kept as a
// diagnostics artifact, never inlined into the evidence.
func (p Prober) Run(ctx context.Context, pr capstan.Probe, t job.ProbeTarget) (result string, source map[string]any, output []byte) {
	result, source, output = p.run(ctx, pr, t)
	if pr.Observes != "" && result == capstan.EvidencePassed {
		result = compareDesired(pr, source, output, t.Desired)
	}
	return result, source, output
}

// compareDesired fails a passing probe whose observed value is not the
// desired state's (recorded in its source either way).
func compareDesired(pr capstan.Probe, source map[string]any, output []byte, desired map[string]any) string {
	want, declared := desired[pr.Observes]
	got, _ := ObservedValue(pr, source, output)
	source["observes"], source["observed"] = pr.Observes, got
	if !declared {
		source["note"] = "no desired state declares " + pr.Observes
		return capstan.EvidenceInconclusive
	}
	source["desired"] = want
	if fmt.Sprint(want) != fmt.Sprint(got) {
		return capstan.EvidenceFailed
	}
	return capstan.EvidencePassed
}

// ObservedValue is the value a probe that observes a desired-state field
// read from the real host: a file's sha256, whether a service runs, an
// ssh_command's output (trimmed), an http probe's json_path value. ok is
// false when the probe saw nothing to report (no file, no answer).
func ObservedValue(pr capstan.Probe, source map[string]any, output []byte) (any, bool) {
	switch pr.Type {
	case "file":
		v, ok := source["sha256"]
		return v, ok
	case "service":
		v, ok := source["running"].(bool)
		return v, ok
	case "ssh_command":
		if _, ran := source["exit_code"]; !ran {
			return nil, false
		}
		return local.Trimmed(output), true
	case "http", "kubernetes":
		v, ok := source["observed"]
		return v, ok && v != nil
	}
	return nil, false
}

func (p Prober) run(ctx context.Context, pr capstan.Probe, t job.ProbeTarget) (result string, source map[string]any, output []byte) {
	switch pr.Type {
	case "sim":
		return capstan.EvidencePassed, map[string]any{"type": "sim", "note": "simulated: nothing real was checked"}, nil
	case "command":
		return p.commandProbe(ctx, pr, t)
	case "http":
		return p.httpProbe(ctx, pr, t)
	case "resource_state":
		result, source = p.resourceProbe(ctx, pr, t)
	case "capability":
		result, source = p.capabilityProbe(ctx, pr, t)
	default:
		if rp := p.Remote[pr.Type]; rp != nil {
			return remoteProbe(ctx, rp, pr, t)
		}
		result, source = capstan.EvidenceInconclusive, map[string]any{"type": pr.Type, "note": "unknown probe type"}
	}
	return result, source, nil
}

// remoteProbe runs a probe of real state on its target and records where
// it observed it.
func remoteProbe(ctx context.Context, rp job.RemoteProbe, pr capstan.Probe, t job.ProbeTarget) (string, map[string]any, []byte) {
	host := t.Hosts[pr.Target]
	if host == nil {
		return capstan.EvidenceFailed, map[string]any{"type": pr.Type, "target": pr.Target, "note": "the probe's target is not a host bound to this node"}, nil
	}
	if pr.Type == "s3" {
		ref, err := kube.FillRef(capstan.ObjectRef{Name: pr.Bucket}, kube.Params(t.Env))
		if err != nil {
			return capstan.EvidenceFailed, map[string]any{"type": pr.Type, "target": pr.Target, "note": "the probe's bucket: " + err.Error()}, nil
		}
		pr.Bucket = ref.Name
	}
	if pr.Type == "kubernetes" && pr.Object != nil {
		ref, err := kube.FillRef(*pr.Object, kube.Params(t.Env))
		if err != nil {
			return capstan.EvidenceFailed, map[string]any{"type": pr.Type, "target": pr.Target, "note": "the probe's object: " + err.Error()}, nil
		}
		pr.Object = &ref
	}
	if pr.Type == "postgres" {
		password, err := secretArtifact(t.Outputs, pr.PasswordArtifact)
		if err != nil {
			return capstan.EvidenceFailed, map[string]any{"type": pr.Type, "target": pr.Target, "note": "the probe's password: " + err.Error()}, nil
		}
		h := *host
		h.Password = password
		host = &h
	}
	if (pr.Type == "kubernetes") != (host.Cluster != nil) || (pr.Type == "s3") != (host.Store != nil) {
		return capstan.EvidenceFailed, map[string]any{"type": pr.Type, "target": pr.Target, "note": "a kubernetes probe reads a cluster, an s3 probe an object store, the others a host: the probe's target is another kind"}, nil
	}
	var result string
	var source map[string]any
	var out []byte
	if pr.Drift {
		dp, ok := rp.(job.DriftProbe)
		if !ok {
			return capstan.EvidenceFailed, map[string]any{"type": pr.Type, "target": pr.Target, "note": "this server's " + pr.Type + " probe compares no drift"}, nil
		}
		result, source, out = dp.Drift(ctx, pr, host, t.Desired[capstan.AppliedObjectsKey])
	} else {
		result, source, out = rp.Probe(ctx, pr, host)
	}
	if source == nil {
		source = map[string]any{}
	}
	source["type"], source["target"] = pr.Type, pr.Target
	switch {
	case host.Cluster != nil:
		source["cluster"], source["resource"] = host.Cluster.Server, host.Resource
	case host.Store != nil:
		source["endpoint"], source["resource"] = host.Store.Endpoint, host.Resource
	default:
		source["host"], source["address"] = host.Resource, host.Address
	}
	return result, source, out
}

func (p Prober) commandProbe(ctx context.Context, pr capstan.Probe, t job.ProbeTarget) (string, map[string]any, []byte) {
	res := local.ShellRunner{Sandbox: p.Sandbox}.Run(ctx, job.Job{NodeID: "probe:" + pr.Name, Dir: t.Dir, Outputs: t.Outputs, Spec: capstan.RunSpec{Script: pr.Script, Timeout: "1m"}, Env: t.Env})
	source := map[string]any{"type": "command", "command": pr.Script, "exit_code": res.ExitCode}
	if res.Err != nil && res.ExitCode == -1 { // it did not run to an exit: refused, timed out, killed
		source["error_kind"], source["note"] = res.ErrKind, capstan.ErrorMessage(res.Err)
		return capstan.EvidenceFailed, source, res.Output
	}
	if res.ExitCode != pr.ExpectExit {
		return capstan.EvidenceFailed, source, res.Output
	}
	if pr.OutputPattern != "" {
		re, err := regexp.Compile(pr.OutputPattern)
		if err != nil || !re.MatchString(local.Trimmed(res.Output)) {
			source["matched"] = false
			return capstan.EvidenceFailed, source, res.Output
		}
		source["matched"] = true
	}
	return capstan.EvidencePassed, source, res.Output
}

func (p Prober) httpProbe(ctx context.Context, pr capstan.Probe, t job.ProbeTarget) (string, map[string]any, []byte) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	url := pr.URL
	source := map[string]any{"type": "http"}
	if pr.Target != "" { // the URL's ${target.address} is the bound host's
		host := t.Hosts[pr.Target]
		if host == nil {
			source["url"], source["note"] = url, "the probe's target is not a host bound to this node"
			return capstan.EvidenceFailed, source, nil
		}
		url = strings.ReplaceAll(url, "${target.address}", urlHost(host.Address))
		source["target"], source["host"], source["address"] = pr.Target, host.Resource, host.Address
	}
	status, out, err := local.Send(ctx, p.Client, http.MethodGet, url, nil, nil)
	source["url"], source["status"] = url, status
	if err != nil {
		source["error"] = capstan.ErrorMessage(err)
		var ce *capstan.Error
		if !errors.As(err, &ce) {
			source["error"] = err.Error()
		}
		return capstan.EvidenceFailed, source, nil
	}
	if !local.StatusMatches(status, pr.ExpectStatus) {
		return capstan.EvidenceFailed, source, out
	}
	for _, pattern := range []string{pr.OutputPattern, pr.BodyPattern} {
		if pattern == "" {
			continue
		}
		re, err := regexp.Compile(pattern)
		if err != nil || !re.Match(out) {
			source["matched"] = false
			return capstan.EvidenceFailed, source, out
		}
		source["matched"] = true
	}
	if pr.JSONPath != "" {
		got, ok := jsonPath(out, pr.JSONPath)
		source["json_path"], source["observed"] = pr.JSONPath, got
		if !ok || (pr.Equals != nil && fmt.Sprint(pr.Equals) != fmt.Sprint(got)) {
			source["expected"] = pr.Equals
			return capstan.EvidenceFailed, source, out
		}
	}
	return capstan.EvidencePassed, source, out
}

// jsonPath reads a value of a JSON document by a dotted path ($.a.b, or
// a.b; a number indexes an array).
func jsonPath(doc []byte, path string) (any, bool) {
	var cur any
	if json.Unmarshal(doc, &cur) != nil {
		return nil, false
	}
	path = strings.TrimPrefix(strings.TrimPrefix(path, "$"), ".")
	if path == "" {
		return cur, true
	}
	for _, part := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			var ok bool
			if cur, ok = v[part]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// urlHost is an address as a URL's host (an IPv6 address in brackets).
func urlHost(addr string) string {
	if strings.Contains(addr, ":") && !strings.HasPrefix(addr, "[") {
		return "[" + addr + "]"
	}
	return addr
}

// resourceProbe compares one field of a resource's observed state (a dotted
// path; lifecycle_status and health_status name the resource's own fields)
// with the expected value; with none expected the field must be set.
func (p Prober) resourceProbe(ctx context.Context, pr capstan.Probe, t job.ProbeTarget) (string, map[string]any) {
	key := pr.Resource
	if key == "" {
		key = t.Resource
	}
	source := map[string]any{"type": "resource_state", "resource": key, "field": pr.Field}
	if key == "" || p.Resources == nil {
		source["note"] = "the operation has no resource to observe"
		return capstan.EvidenceInconclusive, source
	}
	r, err := p.Resources.GetResourceByKey(ctx, t.Org, key)
	if err != nil {
		source["error"] = err.Error()
		if capstan.ErrorCode(err) == capstan.ENOTFOUND {
			return capstan.EvidenceFailed, source
		}
		return capstan.EvidenceInconclusive, source
	}
	got, ok := ObservedField(r, pr.Field)
	source["observed"] = got
	switch {
	case !ok:
		return capstan.EvidenceFailed, source
	case pr.Equals == nil || fmt.Sprint(pr.Equals) == fmt.Sprint(got):
		return capstan.EvidencePassed, source
	}
	source["expected"] = pr.Equals
	return capstan.EvidenceFailed, source
}

// capabilityProbe passes when a node of the operation that succeeded made
// the capability, or the provider bound to the requirement provides it.
func (p Prober) capabilityProbe(ctx context.Context, pr capstan.Probe, t job.ProbeTarget) (string, map[string]any) {
	source := map[string]any{"type": "capability", "capability": pr.Capability, "requirement": pr.Requirement}
	if slices.Contains(t.Made, pr.Capability) {
		source["made_by_operation"] = true
		return capstan.EvidencePassed, source
	}
	key := t.Providers[pr.Requirement]
	if key == "" || p.Resources == nil {
		source["note"] = "no provider is bound to the requirement"
		return capstan.EvidenceFailed, source
	}
	source["resource"] = key
	r, err := p.Resources.GetResourceByKey(ctx, t.Org, key)
	if err != nil {
		source["error"] = capstan.ErrorMessage(err)
		return capstan.EvidenceInconclusive, source
	}
	provided := r.Provides(pr.Capability) != nil
	source["provided"] = provided
	if provided {
		return capstan.EvidencePassed, source
	}
	return capstan.EvidenceFailed, source
}

// ObservedField reads a field of a resource's observed state by dotted path.
func ObservedField(r *capstan.Resource, path string) (any, bool) {
	switch path {
	case "lifecycle_status":
		return string(r.LifecycleStatus), true
	case "health_status":
		return string(r.HealthStatus), true
	}
	var cur any = r.ObservedState
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

// maxPassword bounds a password a probe reads from an artifact.
const maxPassword = 4096

// secretArtifact reads the operation's artifact name from its outputs
// directory (where a secret one stays until the operation ends): a
// regular file, never a link, of at most maxPassword bytes.
func secretArtifact(outputs, name string) ([]byte, error) {
	if outputs == "" || name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return nil, fmt.Errorf("no artifact %q in this operation's outputs", name)
	}
	f, err := os.OpenFile(filepath.Join(outputs, name), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("artifact %s: %w", name, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("artifact %s is not a regular file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPassword+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("artifact %s: %w", name, err)
	case len(data) > maxPassword:
		return nil, fmt.Errorf("artifact %s is longer than %d bytes", name, maxPassword)
	}
	return bytes.TrimRight(data, "\r\n"), nil
}
