// Command capstan-kube is the test cluster's one binary: etcd (the
// release k8s.io/kubernetes itself requires), kube-apiserver,
// kube-controller-manager and kube-scheduler from k8s.io/kubernetes, and
// kwok (which plays the kubelets), linked together so that the packages
// they share compile once. The first argument names the component; the
// rest are its own flags. scripts/cluster.sh builds and starts it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/etcdmain"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	"sigs.k8s.io/kwok/pkg/config"
	kwok "sigs.k8s.io/kwok/pkg/kwok/cmd"
	"sigs.k8s.io/kwok/pkg/log"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: capstan-kube etcd|apiserver|controller-manager|scheduler|kwok [flags]")
		os.Exit(2)
	}
	component, args := os.Args[1], os.Args[2:]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var cmd *cobra.Command
	switch component {
	case "etcd":
		etcdmain.Main(append([]string{"etcd"}, args...))
		return
	case "apiserver":
		cmd = apiserver.NewAPIServerCommand()
	case "controller-manager":
		cmd = controllermanager.NewControllerManagerCommand()
	case "scheduler":
		cmd = scheduler.NewSchedulerCommand()
	case "kwok":
		var err error
		// kwok reads its configuration from the command's context.
		cmd, ctx, err = kwokCommand(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kwok:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "capstan-kube: unknown component %q\n", component)
		os.Exit(2)
	}
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "capstan-kube %s: %v\n", component, err)
		os.Exit(1)
	}
}

// kwokCommand builds kwok's command as its own main does: its logging and
// configuration flags first, then the command that reads them.
func kwokCommand(ctx context.Context) (*cobra.Command, context.Context, error) {
	flags := pflag.NewFlagSet("global", pflag.ContinueOnError)
	flags.ParseErrorsAllowlist.UnknownFlags = true
	flags.Usage = func() {}
	ctx, _ = log.InitFlags(ctx, flags)
	ctx, err := config.InitFlags(ctx, flags)
	if err != nil {
		return nil, nil, err
	}
	cmd := kwok.NewCommand(ctx)
	cmd.PersistentFlags().AddFlagSet(flags)
	// Kubernetes' packages declare a global --version flag of their own
	// type; cobra's, which a set Version adds, would collide with it.
	cmd.Version = ""
	return cmd, ctx, nil
}
