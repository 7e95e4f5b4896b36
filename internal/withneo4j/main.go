// Command withneo4j runs a command with NEO4J_URI naming Neo4j servers it
// started for it: `make test` starts the suite's servers once, and every
// test package takes turns on them (internal/neo4jtest). With NEO4J_URI
// already set, it runs the command on those. The servers are stopped and
// their data removed when the command ends, however it ends; the
// command's exit code is withneo4j's.
//
//	go run ./internal/withneo4j [-servers N] -- command [args...]
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
	"sync"
	"syscall"

	"github.com/capstan-dev/capstan/internal/neo4jtest"
)

func main() {
	servers := flag.Int("servers", 5, "Neo4j servers to start (tests take turns on them)")
	flag.BoolVar(&warmUp, "warm", true, "warm each server up while the command starts (warm.go)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: withneo4j [-servers N] -- command [args...]")
		os.Exit(2)
	}
	os.Exit(run(*servers, flag.Args()))
}

func run(servers int, command []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if os.Getenv("NEO4J_URI") == "" {
		pool, err := startPool(ctx, servers)
		defer closePool(pool)
		if err != nil {
			fmt.Fprintf(os.Stderr, "withneo4j: FAIL: Neo4j is part of the test suite and could not start: %v\n", err)
			return 1
		}
		uris := make([]string, len(pool))
		for i, s := range pool {
			uris[i] = s.URI
		}
		defer neo4jtest.ForgetTurns(uris)
		if warmUp {
			warming, err := warmPool(ctx, pool)
			defer warming.Wait() // before the servers stop
			if err != nil {
				fmt.Fprintf(os.Stderr, "withneo4j: FAIL: %v\n", err)
				return 1
			}
		}
		os.Setenv("NEO4J_URI", strings.Join(uris, ","))
		fmt.Fprintf(os.Stderr, "withneo4j: %d Neo4j servers (%s) at %s\n", len(pool), pool[0].Kind, os.Getenv("NEO4J_URI"))
	}
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "withneo4j: %s: %v\n", command[0], err)
		return 1
	}
}

// startPool starts n servers at once; on an error it returns those that
// started, for closePool.
func startPool(ctx context.Context, n int) ([]*neo4jtest.Server, error) {
	var (
		mu   sync.Mutex
		pool []*neo4jtest.Server
		errs []error
		wg   sync.WaitGroup
	)
	for range max(n, 1) {
		wg.Go(func() {
			s, err := neo4jtest.StartOwn(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			pool = append(pool, s)
		})
	}
	wg.Wait()
	return pool, errors.Join(errs...)
}

// closePool stops the servers, all at once, and removes their data.
func closePool(pool []*neo4jtest.Server) {
	var wg sync.WaitGroup
	for _, s := range pool {
		wg.Go(func() {
			if err := s.Close(); err != nil {
				fmt.Fprintf(os.Stderr, "withneo4j: stopping %s: %v\n", s.URI, err)
			}
		})
	}
	wg.Wait()
}
