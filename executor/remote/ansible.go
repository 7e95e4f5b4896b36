package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/playbook"
	"github.com/capstan-dev/capstan/sshaccess"
)

// AnsibleRunner runs a job's playbook (runner: ansible) with Debian's
// ansible-playbook against an inventory of one host: the job's target,
// with its key and its pinned host key (StrictHostKeyChecking against a
// known_hosts file of the pinned keys alone). The play recap of the host
// (ok, changed, unreachable, failed) becomes evidence.
//
// ansible-playbook runs in the job sandbox like a shell job (its own uid,
// namespaces and root, none of the server's files): a play that runs on
// the controller (delegate_to: localhost, connection: local — refused at
// lint and plan time where it is written plainly, pack.CheckPlaybook)
// runs there, confined. Its network namespace is empty: ssh reaches the
// target through a relay (a Unix socket in its directory that the server
// dials to the target's checked address and port, and nowhere else).
type AnsibleRunner struct {
	// Egress decides whether the target's address may be dialled (the
	// server's allow-list); nil refuses every target. The relay dials the
	// address checked, never a name to resolve again.
	Egress interface {
		Allows(host string, addr netip.Addr) error
	}
	// Sandbox confines ansible-playbook; nil refuses every ansible job
	// (it would run as the server's user).
	Sandbox *local.Sandbox
}

// allowed resolves the target's address and returns the first the
// allow-list allows.
func (r AnsibleRunner) allowed(ctx context.Context, t *job.Target) (netip.Addr, error) {
	if r.Egress == nil {
		return netip.Addr{}, errors.New("no egress allow-list: ansible reaches no host")
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", t.Address)
	if err != nil {
		return netip.Addr{}, err
	}
	var refused error
	for _, a := range addrs {
		if refused = r.Egress.Allows(t.Address, a); refused == nil {
			return a.Unmap(), nil
		}
	}
	if refused == nil {
		refused = fmt.Errorf("%s has no address", t.Address)
	}
	return netip.Addr{}, refused
}

// recap matches a PLAY RECAP line.
var recap = regexp.MustCompile(`(?m)^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)`)

// inventoryHost is the one host of a job's inventory.
const inventoryHost = playbook.Host

// The files of an ansible job's directory (its /tmp/job), named relative
// to it: ansible-playbook runs there, and ssh resolves them from there.
const (
	keyFile       = "key"
	knownHosts    = "known_hosts"
	inventoryFile = "inventory.json"
	playbookFile  = "playbook.yml"
	relayScript   = "relay.py"
	relaySocket   = "ssh.sock"
	recapFile     = ".recap"
)

// maxRecap is how much of the play's output's end the runner reads for
// the recap, whatever its length.
const maxRecap = 16 << 10

// relayPy connects ssh's standard input and output to the relay's socket
// (ssh's ProxyCommand): python3 is ansible's own interpreter, so it is
// there wherever ansible-playbook is.
const relayPy = `import os, socket, sys, threading
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
def up():
    while True:
        b = os.read(0, 65536)
        if not b:
            s.shutdown(socket.SHUT_WR)
            return
        s.sendall(b)
threading.Thread(target=up, daemon=True).start()
while True:
    b = s.recv(65536)
    if not b:
        break
    while b:
        b = b[os.write(1, b):]
`

// playScript runs the play in the job's directory; its output goes to the
// job's (bounded) output, and its last maxRecap bytes to .recap, so a
// long play's recap is read however much it printed.
func playScript(check bool) string {
	flags := ""
	if check {
		flags = " --check"
	}
	return "set -o pipefail\nansible-playbook -i " + inventoryFile + " " + playbookFile + flags + " 2>&1 | tee .play\nrc=$?\n" +
		"tail -c " + strconv.Itoa(maxRecap) + " .play >" + recapFile + "\nrm -f .play\nexit $rc"
}

// Inventory is the JSON inventory of one host (ansible's yaml inventory
// plugin reads JSON): every value a JSON string or number made by an
// encoder, never text spliced into a format another program parses, and
// each held to sshaccess's rules first. A value cannot carry a variable
// (the user is a portable name, the address an IP literal).
func Inventory(addr netip.Addr, port int, user string) ([]byte, error) {
	if !addr.IsValid() {
		return nil, errors.New("inventory: no address")
	}
	if err := sshaccess.Port(port); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	if err := sshaccess.User(user); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	vars := map[string]any{
		"ansible_host": addr.String(), "ansible_port": port, "ansible_user": user,
		"ansible_connection": "ssh", "ansible_ssh_private_key_file": keyFile,
	}
	return json.Marshal(map[string]any{"all": map[string]any{"hosts": map[string]any{inventoryHost: vars}}})
}

// KnownHosts is the known_hosts file of a target: its pinned keys alone,
// each canonical ("type base64", sshaccess.HostKey) after the host's
// address ([addr]:port unless the port is 22).
func KnownHosts(addr netip.Addr, port int, keys []string) ([]byte, error) {
	if err := sshaccess.Port(port); err != nil {
		return nil, fmt.Errorf("known_hosts: %w", err)
	}
	host := "[" + addr.String() + "]:" + strconv.Itoa(port)
	if port == 22 {
		host = addr.String()
	}
	var b strings.Builder
	for _, k := range keys {
		canonical, err := sshaccess.HostKey(k)
		if err != nil {
			return nil, fmt.Errorf("known_hosts: %w", err)
		}
		b.WriteString(host + " " + canonical + "\n")
	}
	return []byte(b.String()), nil
}

// sshArgs are ssh's options for the play: the pinned keys alone, no
// agent, no multiplexing, through the relay.
const sshArgs = "-o UserKnownHostsFile=" + knownHosts + " -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes" +
	" -o UpdateHostKeys=no -o IdentitiesOnly=yes -o IdentityAgent=none -o ControlMaster=no -o ControlPath=none -o BatchMode=yes" +
	" -o ConnectTimeout=10 -o 'ProxyCommand=python3 " + relayScript + " " + relaySocket + "'"

// Run runs the playbook. Its files (inventory, key, known_hosts,
// playbook, the relay's socket, ansible's own home) live in a directory
// of the job's own, private to the server, removed afterwards; the key
// never reaches a command line.
func (r AnsibleRunner) Run(ctx context.Context, j job.Job) job.Result {
	fail := func(kind string, err error) job.Result {
		return job.Result{ExitCode: -1, ErrKind: kind, Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
	}
	t := j.Target
	if !t.IsHost() {
		return fail(job.ErrKindTarget, errors.New("an ansible job needs a target (run.target: a requirement bound to a compute node)"))
	}
	if len(t.HostKeys) == 0 {
		return fail(job.ErrKindHostKey, errors.New("the catalog pins no host_key for "+t.Resource+": ansible would have to trust whatever answers"))
	}
	if r.Sandbox == nil {
		return fail(local.ErrKindUnisolated, errors.New("ansible-playbook runs only in the job sandbox, and this runner has none"))
	}
	if err := playbook.Check(j.Spec.Playbook); err != nil {
		return fail(job.ErrKindPlaybook, err)
	}
	addr, err := r.allowed(ctx, t)
	if err != nil {
		return fail(KindUnreachable, err)
	}
	inventory, err := Inventory(addr, t.Port, t.User)
	if err != nil {
		return fail(job.ErrKindTarget, err)
	}
	known, err := KnownHosts(addr, t.Port, t.HostKeys)
	if err != nil {
		return fail(job.ErrKindHostKey, err)
	}
	ws, err := newWorkspace(j.Dir)
	if err != nil {
		return fail("runner", err)
	}
	key := append([]byte(nil), t.Key...)
	if len(key) > 0 && key[len(key)-1] != '\n' {
		key = append(key, '\n')
	}
	err = ws.write(map[string][]byte{keyFile: key, knownHosts: known, inventoryFile: inventory, playbookFile: []byte(j.Spec.Playbook), relayScript: []byte(relayPy)})
	if err != nil {
		return fail("runner", errors.Join(err, ws.remove()))
	}
	rl, err := listenRelay(ws.socket(), netip.AddrPortFrom(addr, uint16(t.Port)).String())
	if err == nil {
		err = r.Sandbox.Share(ws.shared()...)
	}
	if err != nil {
		return fail("runner", errors.Join(err, closeRelay(rl), ws.remove()))
	}
	env := map[string]string{"ANSIBLE_HOST_KEY_CHECKING": "True", "ANSIBLE_RETRY_FILES_ENABLED": "False", "ANSIBLE_NOCOLOR": "1",
		"ANSIBLE_LOCAL_TEMP": "tmp", "ANSIBLE_SSH_ARGS": sshArgs, "ANSIBLE_PIPELINING": "False", "USER": "capstan-job"}
	for k, v := range j.Env { // the job's variables, for the playbook's lookups
		if validName(k) && !strings.HasPrefix(k, "ANSIBLE_") {
			env[k] = v
		}
	}
	outputs := j.Outputs
	if outputs == "" {
		outputs = ws.dir
	}
	// Offline whatever --job-network says: the relay is the job's only way
	// out, so controller-side code reaches nothing but the target's sshd.
	res := local.RunScript(ctx, r.Sandbox.Offline(), j, playScript(j.Spec.Check), ws.dir, outputs, env)
	tail, err := local.ReadJobFile(filepath.Join(ws.dir, recapFile), maxRecap+1)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil // the play did not get that far: its output says why
	} else if err != nil {
		err = fmt.Errorf("the play's recap was not read: %w", err)
	}
	notes := []error{err, closeRelay(rl), ws.remove()}
	if ev := recapEvidence(tail, inventoryHost, t); ev != nil {
		res.Evidence = []capstan.Evidence{*ev}
	}
	for _, n := range notes {
		if n != nil { // said where the operator reads the attempt: its output
			res.Output = append(res.Output, fmt.Sprintf("\n[capstan: %v]\n", n)...)
		}
	}
	return classify(res, j, t, tail)
}

func closeRelay(rl *relay) error {
	if rl == nil {
		return nil
	}
	if err := rl.close(); err != nil {
		return fmt.Errorf("the relay to the target: %w", err)
	}
	return nil
}

// workspace is an ansible job's directory (its /tmp/job): the inventory,
// the key, known_hosts, the playbook, the relay's script and socket. It
// sits in a directory of the server's alone (0700) — beside the
// operation's sandbox when there is one, where a start sweeps what a
// crash left (executor.sweepSandboxes), in the temporary directory
// otherwise — so no one reaches it through its path; the job reaches it
// through the mount the sandbox makes.
type workspace struct {
	outer, dir string
	fd         *os.File // dir, open: its socket is bound through /proc/self/fd, however long the path
	files      []string
}

func newWorkspace(sandbox string) (*workspace, error) {
	parent := ""
	if sandbox != "" {
		parent = filepath.Dir(sandbox)
	}
	outer, err := os.MkdirTemp(parent, ".ansible-")
	if err != nil {
		return nil, err
	}
	w := &workspace{outer: outer, dir: filepath.Join(outer, "job")}
	if err := os.Mkdir(w.dir, 0o700); err != nil {
		return nil, errors.Join(err, os.RemoveAll(outer))
	}
	if w.fd, err = os.Open(w.dir); err != nil {
		return nil, errors.Join(err, os.RemoveAll(outer))
	}
	return w, nil
}

func (w *workspace) write(files map[string][]byte) error {
	for name, data := range files {
		p := filepath.Join(w.dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
		w.files = append(w.files, p)
	}
	return nil
}

// socket is where the relay listens, by a path short enough for a Unix
// socket (108 bytes) wherever the data directory is.
func (w *workspace) socket() string {
	return fmt.Sprintf("/proc/self/fd/%d/%s", w.fd.Fd(), relaySocket)
}

// shared are what the job reads: the directory, its files, the socket.
func (w *workspace) shared() []string {
	return append([]string{w.dir, filepath.Join(w.dir, relaySocket)}, w.files...)
}

// remove removes the workspace, the key with it.
func (w *workspace) remove() error {
	err := w.fd.Close()
	if rerr := os.RemoveAll(w.outer); rerr != nil {
		return fmt.Errorf("the job's directory (with the target's key) was not removed: %w", rerr)
	}
	return err
}

// classify names an ended play's failure: a host key that does not match
// the pinned ones, an unreachable host (ansible's exit 4), or its exit.
func classify(res job.Result, j job.Job, t *job.Target, tail []byte) job.Result {
	if res.Err == nil || !strings.HasPrefix(res.ErrKind, "exit:") {
		if res.ErrKind == "timeout" || res.ErrKind == "cancelled" {
			res.Err = fmt.Errorf("job %s: %s on %s", j.NodeID, res.ErrKind, t.Resource)
		}
		return res
	}
	res.Err = fmt.Errorf("job %s: ansible-playbook exited %d on %s", j.NodeID, res.ExitCode, t.Resource)
	out := string(res.Output) + string(tail)
	switch {
	case strings.Contains(out, "Host key verification failed") || strings.Contains(out, "REMOTE HOST IDENTIFICATION HAS CHANGED"):
		res.ErrKind = job.ErrKindHostKey
	case res.ExitCode == 4:
		res.ErrKind = KindUnreachable
	}
	return res
}

// recapEvidence turns the host's PLAY RECAP line into evidence: passed
// when nothing failed and the host was reached.
func recapEvidence(output []byte, name string, t *job.Target) *capstan.Evidence {
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
