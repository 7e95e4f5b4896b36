// Command withcluster runs a command with CAPSTAN_KUBECONFIG naming a
// test cluster it started for it (internal/kubecluster): `make test`
// starts one for the whole run, and every test that needs a cluster
// shares it (internal/kubetest). With CAPSTAN_KUBECONFIG already set, it
// runs the command against that cluster. The cluster is stopped and its
// directory removed when the command ends, however it ends; the
// command's exit code is withcluster's. With -hold and no command it
// starts a cluster for local work (make cluster) and runs until Ctrl-C.
//
//	go run ./internal/withcluster [-nodes worker-1,worker-2] -- command [args...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/capstan-dev/capstan/internal/kubecluster"
)

func main() {
	hold := flag.Bool("hold", false, "start a cluster and keep it until interrupted (no command)")
	nodes := flag.String("nodes", strings.Join(kubecluster.DefaultNodes, ","), "the kwok nodes to start with, comma-separated")
	flag.Parse()
	if !*hold && flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: withcluster [-nodes a,b] -- command [args...] | withcluster -hold")
		os.Exit(2)
	}
	os.Exit(run(*hold, strings.Split(*nodes, ","), flag.Args()))
}

func run(hold bool, nodes []string, command []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if os.Getenv("CAPSTAN_KUBECONFIG") == "" || hold {
		start := time.Now()
		c, err := kubecluster.Start(ctx, kubecluster.Options{Nodes: nodes})
		if err != nil {
			fmt.Fprintf(os.Stderr, "withcluster: FAIL: the test cluster is part of the test suite and could not start: %v\n", err)
			return 1
		}
		defer c.Stop()
		fmt.Fprintf(os.Stderr, "withcluster: cluster at %s ready in %s (kwok nodes %s); kubeconfig %s\n",
			c.Server, time.Since(start).Round(100*time.Millisecond), strings.Join(nodes, ", "), c.Kubeconfig)
		os.Setenv("CAPSTAN_KUBECONFIG", c.Kubeconfig)
		if hold {
			fmt.Printf("export KUBECONFIG=%s\n", c.Kubeconfig)
			<-ctx.Done()
			return 0
		}
	}
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "withcluster: %v\n", err)
		return 1
	}
}
