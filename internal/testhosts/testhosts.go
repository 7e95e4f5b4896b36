// Package testhosts brings up real test hosts on this machine for the
// tests of remote execution: network namespaces, each with a veth
// address and a real OpenSSH sshd (scripts/testhosts.sh), removed when
// the test ends. Nothing leaves the machine. It needs root.
package testhosts

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan/internal/reporoot"
)

// Host is one test host.
type Host struct {
	// Name is h1, h2…; Address its veth address; Port its sshd's.
	Name, Address string
	Port          int
	// HostKey is its sshd's public host key (authorized_keys format).
	HostKey string
	// Root is where its private /etc, /srv and /root live on this
	// machine (Root/etc…): a test reads or edits the host's files there.
	Root string
}

// Hosts are the hosts of one test.
type Hosts struct {
	Dir   string
	Hosts []Host
	// ClientKey is the private key (PEM) every host authorizes for root.
	ClientKey []byte
}

// Script is scripts/testhosts.sh of this repository (of the working
// directory's: reporoot).
func Script() string {
	root, err := reporoot.Dir()
	if err != nil {
		return filepath.Join("scripts", "testhosts.sh") // fails to run, saying which path
	}
	return filepath.Join(root, "scripts", "testhosts.sh")
}

// Start brings up n hosts and removes them when t ends. It fails the
// test (never skips it) when they cannot be made, saying why.
func Start(t testing.TB, n int) *Hosts {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("test hosts are network namespaces: run as root (CI does)")
	}
	dir, err := os.MkdirTemp("/var/tmp", "capstan-hosts-")
	if err != nil {
		t.Fatal(err)
	}
	h := &Hosts{Dir: dir}
	t.Cleanup(func() {
		if out, err := exec.Command("bash", Script(), "down", dir).CombinedOutput(); err != nil {
			t.Errorf("removing the test hosts: %v\n%s", err, out)
		}
		_ = os.RemoveAll(dir)
	})
	var stderr bytes.Buffer
	cmd := exec.Command("bash", Script(), "up", dir, fmt.Sprint(n))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the test hosts did not come up: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			t.Fatalf("testhosts.sh said %q", line)
		}
		var port int
		fmt.Sscan(f[2], &port)
		h.Hosts = append(h.Hosts, Host{Name: f[0], Address: f[1], Port: port, HostKey: f[3] + " " + f[4], Root: filepath.Join(dir, f[0], "fs")})
	}
	if len(h.Hosts) != n {
		t.Fatalf("asked for %d test hosts, got %d", n, len(h.Hosts))
	}
	if h.ClientKey, err = os.ReadFile(filepath.Join(dir, "client_ed25519")); err != nil {
		t.Fatal(err)
	}
	return h
}

// KillSSHD kills host i's (0-based) sshd processes at once, as a crash
// would: connections drop, and what their sessions ran stays.
func (h *Hosts) KillSSHD(t testing.TB, i int) {
	t.Helper()
	h.script(t, "kill-sshd", fmt.Sprint(i+1))
}

// StartSSHD starts host i's sshd again.
func (h *Hosts) StartSSHD(t testing.TB, i int) {
	t.Helper()
	h.script(t, "start-sshd", fmt.Sprint(i+1))
}

// Exec runs a command on host i (in its namespaces: its processes, its
// files, its network), as a person logged in there would, and returns
// its output; a failure fails the test.
func (h *Hosts) Exec(t testing.TB, i int, cmd ...string) []byte {
	t.Helper()
	return h.script(t, append([]string{"exec", fmt.Sprint(i + 1)}, cmd...)...)
}

func (h *Hosts) script(t testing.TB, args ...string) []byte {
	t.Helper()
	out, err := exec.Command("bash", append([]string{Script(), args[0], h.Dir}, args[1:]...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("testhosts.sh %s: %v\n%s", args[0], err, out)
	}
	return out
}

// Catalog is a catalog document with the hosts as compute nodes of
// environment env, their host keys pinned and their private key the
// secret named keySecret.
func (h *Hosts) Catalog(org, env, keySecret string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "organization: %s\nenvironments: [%s]\ncompute_nodes:\n", org, env)
	for _, x := range h.Hosts {
		fmt.Fprintf(&b, "  - {name: %s, environment: %s, os: debian, ssh_user: root, address: %q, ssh_port: %d, ssh_host_key: %q, ssh_private_key: \"secret:%s\", health: healthy}\n",
			x.Name, env, x.Address, x.Port, x.HostKey, keySecret)
	}
	return b.String()
}
