package remote_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/executor/remote"
	"github.com/capstan-dev/capstan/internal/testhosts"
)

const playbook = `- hosts: target
  gather_facts: false
  tasks:
    - name: write the file
      ansible.builtin.copy:
        dest: "{{ lookup('env', 'CAPSTAN_PARAM_PATH') }}"
        content: "written by ansible\n"
        mode: "0640"
`

// ansibleHost is a server's side of an ansible job: its sandbox, hiding a
// tokens file and a data directory any user could read.
type ansibleHost struct {
	sandbox       *local.Sandbox
	tokens, data  string
	tokensSecret  string
	runner        remote.AnsibleRunner
	work, outputs string
	markerDir     string
	serverUID     int
	hosts         *testhosts.Hosts
}

func newAnsibleHost(t *testing.T) *ansibleHost {
	t.Helper()
	hosts := testhosts.Start(t, 2)
	root, err := os.MkdirTemp("/var/lib", "capstan-ansible-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	require.NoError(t, os.Chmod(root, 0o777))
	h := &ansibleHost{tokens: filepath.Join(root, "tokens.yaml"), data: filepath.Join(root, "data"), tokensSecret: "TOKENS-OF-EVERY-ORGANIZATION-4711",
		markerDir: root, serverUID: os.Geteuid(), hosts: hosts}
	require.NoError(t, os.MkdirAll(h.data, 0o755))
	require.NoError(t, os.WriteFile(h.tokens, []byte(h.tokensSecret), 0o644))
	h.work, h.outputs = filepath.Join(h.data, "sandbox", "op1"), filepath.Join(h.data, "outputs", "op1")
	require.NoError(t, os.MkdirAll(h.work, 0o750))
	require.NoError(t, os.MkdirAll(h.outputs, 0o750))
	h.sandbox = local.NewSandbox(local.SandboxConfig{Hide: []string{h.data, h.tokens}, Slots: 4})
	require.True(t, h.sandbox.Isolated(), h.sandbox.Describe())
	allow, err := local.ParseEgress([]string{"10.0.0.0/8"})
	require.NoError(t, err)
	h.runner = remote.AnsibleRunner{Egress: allow, Sandbox: h.sandbox}
	return h
}

func (h *ansibleHost) run(target *job.Target, play string, check bool, env map[string]string) job.Result {
	return h.runner.Run(context.Background(), job.Job{OperationID: "op1", NodeID: "play", Attempt: 1, Dir: h.work, Outputs: h.outputs,
		Target: target, Env: env, Spec: capstan.RunSpec{Runner: "ansible", Target: "host", Playbook: play, Check: check, Timeout: "2m"}})
}

// TestAnsibleRunner runs a playbook with Debian's ansible-playbook, in
// the job sandbox, on a real host: the change happens and its recap is
// evidence; --check changes nothing; a host key that is not pinned stops
// it; a host the allow-list does not name is never reached.
func TestAnsibleRunner(t *testing.T) {
	h := newAnsibleHost(t)
	res := h.run(targetOf(h.hosts, 0), playbook, false, map[string]string{"CAPSTAN_PARAM_PATH": "/srv/ansible.txt"})
	require.NoError(t, res.Err, "%s", res.Output)
	data, err := os.ReadFile(filepath.Join(h.hosts.Hosts[0].Root, "srv", "ansible.txt"))
	require.NoError(t, err)
	require.Equal(t, "written by ansible\n", string(data))
	require.Len(t, res.Evidence, 1)
	require.Equal(t, capstan.EvidencePassed, res.Evidence[0].Result)
	require.Equal(t, 1, res.Evidence[0].Source["changed"])
	require.Equal(t, "compute.node/h1", res.Evidence[0].Source["host"])

	res = h.run(targetOf(h.hosts, 0), playbook, true, map[string]string{"CAPSTAN_PARAM_PATH": "/srv/dry.txt"})
	require.NoError(t, res.Err, "%s", res.Output)
	require.Equal(t, 1, res.Evidence[0].Source["changed"], "the dry run says what it would change")
	_, err = os.Stat(filepath.Join(h.hosts.Hosts[0].Root, "srv", "dry.txt"))
	require.True(t, os.IsNotExist(err), "--check changed nothing")

	wrong := targetOf(h.hosts, 0)
	wrong.HostKeys = []string{h.hosts.Hosts[1].HostKey}
	res = h.run(wrong, playbook, false, map[string]string{"CAPSTAN_PARAM_PATH": "/srv/mitm.txt"})
	require.Equal(t, job.ErrKindHostKey, res.ErrKind, "%v\n%s", res.Err, res.Output)
	_, err = os.Stat(filepath.Join(h.hosts.Hosts[0].Root, "srv", "mitm.txt"))
	require.True(t, os.IsNotExist(err))
	require.NotContains(t, string(res.Output), string(h.hosts.ClientKey), "the key is never shown")

	none, err := local.ParseEgress(nil)
	require.NoError(t, err)
	res = remote.AnsibleRunner{Egress: none, Sandbox: h.sandbox}.Run(context.Background(), job.Job{NodeID: "play", Target: targetOf(h.hosts, 0),
		Spec: capstan.RunSpec{Runner: "ansible", Target: "host", Playbook: playbook}})
	require.Equal(t, remote.KindUnreachable, res.ErrKind)
	require.Contains(t, res.Err.Error(), "not in the allow-list")

	res = remote.AnsibleRunner{Egress: none}.Run(context.Background(), job.Job{NodeID: "play", Target: targetOf(h.hosts, 0),
		Spec: capstan.RunSpec{Runner: "ansible", Target: "host", Playbook: playbook}})
	require.Equal(t, local.ErrKindUnisolated, res.ErrKind, "no sandbox, no play")
}

// TestAnsibleAttacks are the attacks of issue 42 on the runner, as a
// hostile organization admin would try them: a play that runs on the
// controller, and catalog fields that would rewrite the inventory. The
// marker is never written as the server's user and the tokens file is
// never read.
func TestAnsibleAttacks(t *testing.T) {
	h := newAnsibleHost(t)
	marker := filepath.Join(h.markerDir, "marker")
	noHarm := func(t *testing.T, res job.Result) {
		t.Helper()
		require.NotContains(t, string(res.Output), h.tokensSecret, "the tokens file is never read")
		require.NotContains(t, string(res.Output), string(h.hosts.ClientKey))
		if info, err := os.Stat(marker); err == nil {
			require.NotEqual(t, uint32(h.serverUID), info.Sys().(interface{ Uid() uint32 }), "the marker is never the server's")
		}
		_, err := os.Stat(marker)
		require.True(t, os.IsNotExist(err), "nothing of the controller's host was written")
	}
	delegate := fmt.Sprintf(`- hosts: target
  gather_facts: false
  tasks:
    - ansible.builtin.shell: "id > %s; cat %s"
      delegate_to: localhost
`, marker, h.tokens)
	t.Run("delegate_to localhost is refused before it runs", func(t *testing.T) {
		res := h.run(targetOf(h.hosts, 0), delegate, false, nil)
		require.Equal(t, job.ErrKindPlaybook, res.ErrKind, "%v\n%s", res.Err, res.Output)
		require.Contains(t, res.Err.Error(), "delegates a task")
		noHarm(t, res)
	})
	// What a template computes on the controller cannot be read before it
	// runs: it runs in the sandbox, as another uid, without the host.
	lookup := fmt.Sprintf(`- hosts: target
  gather_facts: false
  tasks:
    - ansible.builtin.debug:
        msg: "uid={{ lookup('pipe', 'id -u') }} tokens={{ lookup('pipe', 'cat %s 2>&1 || true') }} marker={{ lookup('pipe', 'id > %s 2>&1 || echo refused') }} data={{ lookup('pipe', 'ls %s 2>&1 || true') }}"
`, h.tokens, marker, h.data)
	t.Run("a controller-side lookup runs in the sandbox", func(t *testing.T) {
		res := h.run(targetOf(h.hosts, 0), lookup, false, nil)
		require.NoError(t, res.Err, "%s", res.Output)
		noHarm(t, res)
		require.NotContains(t, string(res.Output), "uid=0 ", "not the server's root")
		require.Contains(t, string(res.Output), "uid=1000", "a job's uid")
		require.Contains(t, string(res.Output), "No such file or directory")
	})
	for _, user := range []string{"root ansible_connection=local", "root\nlocalhost ansible_connection=local", "{{ lookup('pipe','id') }}"} {
		t.Run("ssh_user "+strings.ReplaceAll(user, "\n", `\n`), func(t *testing.T) {
			target := targetOf(h.hosts, 0)
			target.User = user
			res := h.run(target, playbook, false, map[string]string{"CAPSTAN_PARAM_PATH": "/srv/x.txt"})
			require.Equal(t, job.ErrKindTarget, res.ErrKind, "%v\n%s", res.Err, res.Output)
			require.Contains(t, res.Err.Error(), "portable user name")
			noHarm(t, res)
		})
	}
	t.Run("a second known_hosts line", func(t *testing.T) {
		target := targetOf(h.hosts, 0)
		target.HostKeys = []string{h.hosts.Hosts[1].HostKey + "\n* " + h.hosts.Hosts[1].HostKey}
		res := h.run(target, playbook, false, map[string]string{"CAPSTAN_PARAM_PATH": "/srv/x.txt"})
		require.Equal(t, job.ErrKindHostKey, res.ErrKind, "%v\n%s", res.Err, res.Output)
		noHarm(t, res)
	})
}

// TestAnsibleIsOfflineWhateverJobNetworkSays: with --job-network on
// (a sandbox with the host's network), controller-side code of a play
// still reaches nothing — not a service on the server's loopback — and
// the relay carries only what speaks SSH.
func TestAnsibleIsOfflineWhateverJobNetworkSays(t *testing.T) {
	h := newAnsibleHost(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("CONTROL-PLANE\n"))
			c.Close()
		}
	}()
	defer func() { l.Close(); <-served }()
	online := local.NewSandbox(local.SandboxConfig{Network: true, Slots: 2})
	r := h.runner
	r.Sandbox = online
	play := fmt.Sprintf(`- hosts: target
  gather_facts: false
  tasks:
    - ansible.builtin.debug:
        msg: 'plane={{ lookup("pipe", "bash -c ''exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3'' 2>/dev/null || echo unreachable") }}'
`, l.Addr().(*net.TCPAddr).Port)
	res := r.Run(context.Background(), job.Job{OperationID: "op1", NodeID: "play", Attempt: 1, Dir: h.work, Target: targetOf(h.hosts, 0),
		Spec: capstan.RunSpec{Runner: "ansible", Target: "host", Playbook: play, Timeout: "2m"}})
	require.NoError(t, res.Err, "%s", res.Output)
	require.NotContains(t, string(res.Output), "CONTROL-PLANE")
	require.Contains(t, string(res.Output), "plane=unreachable")
	entries, err := os.ReadDir(filepath.Dir(h.work))
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasPrefix(e.Name(), ".ansible-"), "the job's directory, with the key, is gone: %s", e.Name())
	}
}
