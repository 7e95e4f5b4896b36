package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/pack"
	"github.com/capstan-dev/capstan/packs"
)

// clusterRBAC prints the grant an administrator applies to a cluster so
// that Capstan may do there what the bundled packs declare, and nothing
// more (docs/KUBERNETES.md): `capstan cluster rbac | kubectl apply -f -`.
func clusterRBAC(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cluster rbac", flag.ContinueOnError)
	fs.SetOutput(stderr)
	namespace := fs.String("namespace", "capstan-system", "the namespace of Capstan's ServiceAccount")
	account := fs.String("service-account", "capstan", "the ServiceAccount Capstan acts as; its token is the cluster's credentials")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	bundled, problems := pack.LoadSet(packs.FS, packs.Order, nil)
	if len(problems) > 0 {
		fmt.Fprintln(stderr, "capstan: bundled packs are broken:", problems)
		return 1
	}
	grant, err := kube.Grant(bundled, *namespace, *account)
	if err != nil {
		fmt.Fprintln(stderr, "capstan:", err)
		return 1
	}
	fmt.Fprint(stdout, grant)
	return 0
}
