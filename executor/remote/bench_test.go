package remote_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/executor/remote"
	"github.com/capstan-dev/capstan/internal/testhosts"
)

// BenchmarkSSHRunner is the ssh runner's cost per job on a real test
// host, its connection reused (runner), beside the floor a bare
// `ssh host true` loop gives on the same host in the same run (a new
// connection, handshake and process per call). Run with
// go test -run '^$' -bench SSHRunner ./executor/remote (as root).
func BenchmarkSSHRunner(b *testing.B) {
	hosts := testhosts.Start(b, 1)
	pool := remote.NewPool(remote.Config{Dial: dialer})
	defer pool.Close()
	target := targetOf(hosts, 0)
	r := remote.Runner{Pool: pool}
	outputs := b.TempDir()
	b.Run("runner", func(b *testing.B) {
		for b.Loop() {
			res := r.Run(context.Background(), job.Job{OperationID: "bench", NodeID: "n", Attempt: 1, Outputs: outputs, Target: target,
				Spec: capstan.RunSpec{Runner: "ssh", Script: "true", Timeout: "30s"}})
			if res.Err != nil {
				b.Fatal(res.Err)
			}
		}
	})
	key := filepath.Join(b.TempDir(), "key")
	if err := os.WriteFile(key, hosts.ClientKey, 0o600); err != nil {
		b.Fatal(err)
	}
	known := filepath.Join(b.TempDir(), "known_hosts")
	if err := os.WriteFile(known, []byte(hosts.Hosts[0].Address+" "+hosts.Hosts[0].HostKey+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	b.Run("bare-ssh-true", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("ssh", "-i", key, "-o", "BatchMode=yes", "-o", "UserKnownHostsFile="+known, "-o", "StrictHostKeyChecking=yes",
				"-o", "LogLevel=ERROR", "root@"+hosts.Hosts[0].Address, "true")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}

// BenchmarkAnsibleRunner is one play of one task (ping) on a real test
// host through the runner — ansible-playbook in the job sandbox, its ssh
// through the relay — beside the floor: the same playbook run by
// ansible-playbook directly as the server's user, connecting itself.
// Run with go test -run '^$' -bench AnsibleRunner ./executor/remote (as
// root).
func BenchmarkAnsibleRunner(b *testing.B) {
	hosts := testhosts.Start(b, 1)
	allow, err := local.ParseEgress([]string{"10.0.0.0/8"})
	if err != nil {
		b.Fatal(err)
	}
	sb := local.NewSandbox(local.SandboxConfig{Slots: 2})
	r := remote.AnsibleRunner{Egress: allow, Sandbox: sb}
	const ping = "- hosts: target\n  gather_facts: false\n  tasks: [{ansible.builtin.ping: {}}]\n"
	target := targetOf(hosts, 0)
	b.Run("runner", func(b *testing.B) {
		for b.Loop() {
			res := r.Run(context.Background(), job.Job{OperationID: "bench", NodeID: "n", Attempt: 1, Target: target,
				Spec: capstan.RunSpec{Runner: "ansible", Target: "host", Playbook: ping, Timeout: "2m"}})
			if res.Err != nil {
				b.Fatalf("%v: %s", res.Err, res.Output)
			}
		}
	})
	dir := b.TempDir()
	files := map[string]string{"key": string(hosts.ClientKey), "known_hosts": hosts.Hosts[0].Address + " " + hosts.Hosts[0].HostKey + "\n", "play.yml": ping,
		"inventory": "target ansible_host=" + hosts.Hosts[0].Address + " ansible_user=root ansible_ssh_private_key_file=" + filepath.Join(dir, "key") + "\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("floor-bare-ansible-playbook", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("ansible-playbook", "-i", filepath.Join(dir, "inventory"), filepath.Join(dir, "play.yml"))
			cmd.Env = append(os.Environ(), "ANSIBLE_SSH_ARGS=-o UserKnownHostsFile="+filepath.Join(dir, "known_hosts")+" -o StrictHostKeyChecking=yes -o ControlMaster=no -o BatchMode=yes",
				"ANSIBLE_HOST_KEY_CHECKING=True", "HOME="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}
