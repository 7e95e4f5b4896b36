package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
)

// AnsibleRunner runs a job's playbook (runner: ansible) with Debian's
// ansible-playbook against an inventory of one host: the job's target,
// with its key and its pinned host key (StrictHostKeyChecking against a
// known_hosts file of the pinned keys alone). The play recap of the host
// (ok, changed, unreachable, failed) becomes evidence.
type AnsibleRunner struct {
	// Playbook is the ansible-playbook binary (default: from PATH).
	Playbook string
	// Egress decides whether the target's address may be dialled (the
	// server's allow-list); nil refuses every target. ansible-playbook is
	// given the address checked, never a name to resolve again.
	Egress interface {
		Allows(host string, addr netip.Addr) error
	}
}

// allowed resolves the target's address and returns the first the
// allow-list allows.
func (r AnsibleRunner) allowed(ctx context.Context, t *executor.Target) (string, error) {
	if r.Egress == nil {
		return "", errors.New("no egress allow-list: ansible reaches no host")
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", t.Address)
	if err != nil {
		return "", err
	}
	var refused error
	for _, a := range addrs {
		if refused = r.Egress.Allows(t.Address, a); refused == nil {
			return a.Unmap().String(), nil
		}
	}
	if refused == nil {
		refused = fmt.Errorf("%s has no address", t.Address)
	}
	return "", refused
}

// recap matches a PLAY RECAP line.
var recap = regexp.MustCompile(`(?m)^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)`)

// Run runs the playbook. Its files (inventory, key, known_hosts,
// playbook, ansible's own home) live in a private directory removed
// afterwards; the key never reaches a command line.
func (r AnsibleRunner) Run(ctx context.Context, j executor.Job) executor.Result {
	fail := func(kind string, err error) executor.Result {
		return executor.Result{ExitCode: -1, ErrKind: kind, Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
	}
	t := j.Target
	if t == nil {
		return fail(executor.ErrKindTarget, errors.New("an ansible job needs a target (run.target: a requirement bound to a compute node)"))
	}
	if len(t.HostKeys) == 0 {
		return fail(executor.ErrKindHostKey, errors.New("the catalog pins no host_key for "+t.Resource+": ansible would have to trust whatever answers"))
	}
	addr, err := r.allowed(ctx, t)
	if err != nil {
		return fail(KindUnreachable, err)
	}
	bin := r.Playbook
	if bin == "" {
		bin = "ansible-playbook"
	}
	dir, err := os.MkdirTemp("", "capstan-ansible-")
	if err != nil {
		return fail("runner", err)
	}
	defer os.RemoveAll(dir)
	host := "[" + addr + "]:" + strconv.Itoa(t.Port)
	if t.Port == 22 {
		host = addr
	}
	var known strings.Builder
	for _, k := range t.HostKeys {
		fmt.Fprintf(&known, "%s %s\n", host, k)
	}
	name := "target"
	inventory := fmt.Sprintf("%s ansible_host=%s ansible_port=%d ansible_user=%s ansible_ssh_private_key_file=%s\n",
		name, addr, t.Port, t.User, filepath.Join(dir, "key"))
	key := append([]byte(nil), t.Key...)
	if len(key) > 0 && key[len(key)-1] != '\n' {
		key = append(key, '\n')
	}
	for file, content := range map[string][]byte{"key": key, "known_hosts": []byte(known.String()),
		"inventory": []byte(inventory), "playbook.yml": []byte(j.Spec.Playbook)} {
		if err := os.WriteFile(filepath.Join(dir, file), content, 0o600); err != nil {
			return fail("runner", err)
		}
	}
	args := []string{"-i", filepath.Join(dir, "inventory"), filepath.Join(dir, "playbook.yml")}
	if j.Spec.Check {
		args = append(args, "--check")
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
		"ANSIBLE_HOST_KEY_CHECKING=True", "ANSIBLE_RETRY_FILES_ENABLED=False", "ANSIBLE_NOCOLOR=1",
		"ANSIBLE_LOCAL_TEMP=" + filepath.Join(dir, "tmp"), "ANSIBLE_SSH_ARGS=-o UserKnownHostsFile=" + filepath.Join(dir, "known_hosts") +
			" -o StrictHostKeyChecking=yes -o ControlMaster=no -o BatchMode=yes -o ConnectTimeout=10"}
	for k, v := range j.Env { // the job's variables, for the playbook's lookups
		if validName(k) {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out bounded
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	res := executor.Result{Output: out.Bytes()}
	if ev := recapEvidence(out.buf, name, t); ev != nil {
		res.Evidence = []capstan.Evidence{*ev}
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.ExitCode, res.ErrKind, res.Err = -1, "timeout", fmt.Errorf("job %s: timeout on %s", j.NodeID, t.Resource)
	case ctx.Err() != nil:
		res.ExitCode, res.ErrKind, res.Err = -1, "cancelled", fmt.Errorf("job %s: cancelled on %s", j.NodeID, t.Resource)
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
		res.ErrKind, res.Err = fmt.Sprintf("exit:%d", res.ExitCode), fmt.Errorf("job %s: ansible-playbook exited %d on %s", j.NodeID, res.ExitCode, t.Resource)
		switch {
		case strings.Contains(string(out.buf), "Host key verification failed") || strings.Contains(string(out.buf), "REMOTE HOST IDENTIFICATION HAS CHANGED"):
			res.ErrKind = executor.ErrKindHostKey
		case res.ExitCode == 4:
			res.ErrKind = KindUnreachable
		}
	default:
		res.ExitCode, res.ErrKind, res.Err = -1, "runner", fmt.Errorf("job %s: ansible-playbook: %w", j.NodeID, err)
	}
	return res
}

// recapEvidence turns the host's PLAY RECAP line into evidence: passed
// when nothing failed and the host was reached.
func recapEvidence(output []byte, name string, t *executor.Target) *capstan.Evidence {
	for _, m := range recap.FindAllSubmatch(output, -1) {
		if string(m[1]) != name {
			continue
		}
		n := func(i int) int { v, _ := strconv.Atoi(string(m[i])); return v }
		source := map[string]any{"type": "ansible_recap", "host": t.Resource, "address": t.Address,
			"ok": n(2), "changed": n(3), "unreachable": n(4), "failed": n(5)}
		result := capstan.EvidencePassed
		if n(4) > 0 || n(5) > 0 {
			result = capstan.EvidenceFailed
		}
		return &capstan.Evidence{Item: "play-recap", Result: result, Source: source}
	}
	return nil
}
