package local_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
)

// BenchmarkSandboxedJob is what the sandbox costs one job that does
// nothing: its namespaces, its own root (a tmpfs, a dozen mounts,
// pivot_root), the user namespace that forbids another, the uid change —
// beside the floor, the same `true` run by bash with no sandbox at all.
// Run with go test -run '^$' -bench SandboxedJob ./executor (as root).
func BenchmarkSandboxedJob(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("the sandbox's namespaces need root")
	}
	sb := local.NewSandbox(local.SandboxConfig{Slots: 2})
	if !sb.Isolated() {
		b.Fatal(sb.Describe())
	}
	work, outputs := b.TempDir(), b.TempDir()
	b.Run("sandboxed", func(b *testing.B) {
		for b.Loop() {
			res := local.ShellRunner{Sandbox: sb}.Run(context.Background(), job.Job{NodeID: "bench", Dir: work, Outputs: outputs, Spec: capstan.RunSpec{Script: "true", Timeout: "30s"}})
			if res.Err != nil {
				b.Fatalf("%v: %s", res.Err, res.Output)
			}
		}
	})
	b.Run("floor-bare-bash", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("bash", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
