// Command capstan-load measures Capstan's live subscriptions: it starts a
// server (or uses --server), starts operations that hold at a gate, opens
// subscribers over WebSocket (gorilla/websocket, graphql-transport-ws)
// spread over the operations, measures the server's memory per idle
// subscription, releases the gates so every operation produces events, and
// reports commit-to-client latency (p50/p99), the delivered event rate,
// gaps, duplicates and overflows. Everything runs on 127.0.0.1.
//
//	make load                       # 1,000 subscribers over 100 operations
//	go run ./cmd/capstan-load -subscribers 10000 -operations 1
//	go run ./cmd/capstan-load -floor -subscribers 10000   # the machine's floor (floor.go)
//	go run ./cmd/capstan-load -replicas 3 -subscribers 10000   # three replicas on one Neo4j
//	go run ./cmd/capstan-load -throughput -replicas 3 -nodes 100 -step 0s   # jobs/s of three replicas (throughput.go)
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"
)

type config struct {
	capstan, server, token  string
	subscribers, operations int
	nodes                   int
	step                    time.Duration
	dialers, perConnection  int
	window, hold            time.Duration
	cpuProfile              string
	perEvent                bool
	// replicas > 1 starts that many servers on one Neo4j (neo4jURI, or
	// one it starts itself); subscribers and gate decisions are spread
	// over them, so most events reach their subscribers through another
	// replica's tailer. servers are their URLs (server is the first).
	replicas int
	neo4jURI string
	servers  []string
	// store is where one server keeps its data (embedded or neo4j);
	// replicas are always on Neo4j.
	store string
	// rounds is how many batches -throughput measures on one set of
	// servers.
	rounds int
}

func main() {
	var c config
	flag.StringVar(&c.capstan, "capstan", "bin/capstan", "capstan binary to start (when --server is empty)")
	flag.StringVar(&c.server, "server", "", "use this running server (http://host:port) instead of starting one; its dev token in -token")
	flag.StringVar(&c.token, "token", "load-test-token-0123456789", "admin token (the dev token of the started server)")
	flag.IntVar(&c.subscribers, "subscribers", 1000, "concurrent subscribers (one WebSocket connection each)")
	flag.IntVar(&c.operations, "operations", 100, "operations the subscribers are spread over")
	flag.IntVar(&c.nodes, "nodes", 20, "jobs per operation (each commits about three events)")
	flag.DurationVar(&c.step, "step", 50*time.Millisecond, "duration of each simulated job")
	flag.IntVar(&c.dialers, "dialers", 64, "connections opened at once")
	flag.IntVar(&c.perConnection, "per-connection", 1, "subscriptions per WebSocket connection (a dashboard follows several operations over one)")
	flag.DurationVar(&c.window, "timeout", 10*time.Minute, "give up after this long")
	flag.DurationVar(&c.hold, "hold", 2*time.Second, "how long the subscriptions stay idle before the operations are released (memory is measured at its end)")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write the server's CPU profile of the released phase to this file (go tool pprof FILE)")
	flag.BoolVar(&c.perEvent, "per-event", false, "also print the latency percentiles of each live event (the i-th of every subscriber)")
	flag.IntVar(&c.replicas, "replicas", 1, "servers started on one Neo4j (more than one: replicas mode; subscribers and decisions spread over them)")
	flag.StringVar(&c.neo4jURI, "neo4j-uri", "", "the Neo4j of -replicas (empty: start a throwaway one)")
	flag.StringVar(&c.store, "store", "embedded", "the store of a single server: embedded or neo4j (-replicas > 1 is always neo4j)")
	flag.IntVar(&c.rounds, "rounds", 1, "batches -throughput runs one after another on the same servers (Neo4j's JIT warms over the first)")
	rate := flag.Bool("throughput", false, "measure jobs per second instead: -operations chains of -nodes jobs of -step each, released at once, on -replicas servers (throughput.go)")
	floor := flag.Bool("floor", false, "measure this machine's floor instead: one raw loopback TCP write to each of -subscribers connections, read by another process (no WebSocket, GraphQL or Capstan)")
	floorSize := flag.Int("floor-size", 1024, "bytes per write in -floor")
	floorReader := flag.String("floor-reader", "", "(internal) the reading side of -floor, connecting to this address")
	selfProfile := flag.String("selfprofile", "", "write this load generator's own CPU profile to this file (it shares the machine with the server)")
	flag.Parse()
	if *floor || *floorReader != "" {
		var err error
		if *floorReader != "" {
			err = runFloorReader(*floorReader, c.subscribers, *floorSize, os.Stdout)
		} else {
			err = runFloor(c.subscribers, *floorSize, os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "capstan-load:", err)
			os.Exit(1)
		}
		return
	}
	if *selfProfile != "" {
		f, err := os.Create(*selfProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "capstan-load:", err)
			os.Exit(1)
		}
	}
	if *rate {
		if err := runThroughput(c, func(t throughput) { t.print(os.Stdout) }); err != nil {
			fmt.Fprintln(os.Stderr, "capstan-load:", err)
			os.Exit(1)
		}
		return
	}
	r, err := run(c)
	pprof.StopCPUProfile() // before any exit; a no-op when not profiling
	if err != nil {
		fmt.Fprintln(os.Stderr, "capstan-load:", err)
		os.Exit(1)
	}
	r.print(os.Stdout, c)
	if r.gaps+r.duplicates > 0 {
		os.Exit(1)
	}
}
