package remote_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
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
			res := r.Run(context.Background(), executor.Job{OperationID: "bench", NodeID: "n", Attempt: 1, Outputs: outputs, Target: target,
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
