package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/shard"
	"github.com/capstan-dev/capstan/gqlws"
	"github.com/capstan-dev/capstan/internal/metrics"
)

// throughput is what -throughput measured: operations of a chain of
// simulated jobs, all released at once, from the first release to the
// last operation's completedAt.
type throughput struct {
	operations, nodes int
	servers           int
	wall              time.Duration
	// busy is the share of the machine's cores busy over the batch (from
	// /proc/stat: the servers, their database, this tool); serverCPU is
	// the CPU time the servers spent (their process_cpu_seconds_total).
	busy      float64
	serverCPU time.Duration
	cores     int
}

// NodesPerSecond is the jobs run per second over the whole batch.
func (t throughput) NodesPerSecond() float64 {
	return float64(t.operations*t.nodes) / t.wall.Seconds()
}

func (t throughput) print(w io.Writer) {
	fmt.Fprintf(w, "%d operations of %d jobs over %d server(s): %.0f nodes/s (%.2fs from the first release to the last end); "+
		"the machine's %d cores %.0f%% busy, the servers' CPU %.0f µs a job\n",
		t.operations, t.nodes, t.servers, t.NodesPerSecond(), t.wall.Seconds(), t.cores, 100*t.busy,
		float64(t.serverCPU.Microseconds())/float64(t.operations*t.nodes))
}

// runThroughput starts the servers (c.replicas on one Neo4j, or one on
// the store c.store names), waits until the replicas share the shards
// evenly, and measures c.rounds batches one after another on them (the
// first ones warm Neo4j's JIT up: compare the last).
func runThroughput(c config, each func(throughput)) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.window)
	defer cancel()
	if c.server == "" {
		urls, stop, err := startServers(ctx, c)
		if err != nil {
			return err
		}
		defer stop()
		c.server, c.servers = urls[0], urls
	}
	if len(c.servers) == 0 {
		c.servers = []string{c.server}
	}
	if err := waitSpread(ctx, c.servers); err != nil {
		return err
	}
	for round := range max(1, c.rounds) {
		t, err := measureBatch(ctx, c, c.cpuProfile != "" && round == max(1, c.rounds)-1)
		if err != nil {
			return err
		}
		each(t)
	}
	return nil
}

// measureBatch starts c.operations operations held at their gate,
// releases them all at once through the servers in turn, and waits (on
// each server's operations subscription) until every one ended. Any
// operation that did not succeed fails the batch.
//
// With profile, the first server's CPU profile of 10 s from the release
// is written to c.cpuProfile.
func measureBatch(ctx context.Context, c config, profile bool) (throughput, error) {
	ops, err := startOperations(c)
	if err != nil {
		return throughput{}, err
	}
	ended, err := watchEnds(ctx, c, ops)
	if err != nil {
		return throughput{}, err
	}
	machine0, cpu0, err := cpuNow(c.servers)
	if err != nil {
		return throughput{}, err
	}
	if profile {
		profiled := profileCPU(c.server, c.cpuProfile, 10*time.Second)
		defer func() { <-profiled }()
	}
	first, err := releaseAll(c, ops)
	if err != nil {
		return throughput{}, err
	}
	select {
	case <-ended:
	case <-ctx.Done():
		return throughput{}, fmt.Errorf("the operations did not all end within %s", c.window)
	}
	machine1, cpu1, err := cpuNow(c.servers)
	if err != nil {
		return throughput{}, err
	}
	last, err := lastEnd(c, ops)
	if err != nil {
		return throughput{}, err
	}
	return throughput{operations: len(ops), nodes: c.nodes, servers: len(c.servers), wall: last.Sub(first),
		busy: machine1.busySince(machine0), serverCPU: cpu1 - cpu0, cores: runtime.NumCPU()}, nil
}

// cpuNow reads the machine's CPU counters and the CPU time the servers
// spent so far.
func cpuNow(servers []string) (machineCPU, time.Duration, error) {
	m, err := readMachineCPU()
	if err != nil {
		return m, 0, err
	}
	var spent float64
	for _, s := range servers {
		g, err := metrics.Scrape(s)
		if err != nil {
			return m, 0, err
		}
		spent += g["process_cpu_seconds_total"]
	}
	return m, time.Duration(spent * float64(time.Second)), nil
}

// machineCPU is the first line of /proc/stat: the jiffies every core
// spent busy and idle (idle and iowait) since boot.
type machineCPU struct{ busy, idle uint64 }

func readMachineCPU() (machineCPU, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[0] != "cpu" {
		return machineCPU{}, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var m machineCPU
	for i, f := range fields[1:] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return machineCPU{}, fmt.Errorf("/proc/stat: %w", err)
		}
		if i == 3 || i == 4 { // idle, iowait
			m.idle += n
		} else if i < 8 { // user nice system irq softirq steal (guest time is in user already)
			m.busy += n
		}
	}
	return m, nil
}

// busySince is the share of the cores busy between before and m.
func (m machineCPU) busySince(before machineCPU) float64 {
	busy, idle := float64(m.busy-before.busy), float64(m.idle-before.idle)
	if busy+idle == 0 {
		return 0
	}
	return busy / (busy + idle)
}

// startServers starts c.replicas servers on one Neo4j, or one server on
// the store c.store names.
func startServers(ctx context.Context, c config) ([]string, func(), error) {
	switch {
	case c.replicas > 1 || c.store == "neo4j":
		return startReplicas(ctx, c)
	case c.store != "embedded":
		return nil, nil, fmt.Errorf("-store %q: embedded or neo4j", c.store)
	}
	url, stop, err := startServer(c, nil)
	if err != nil {
		return nil, nil, err
	}
	return []string{url}, stop, nil
}

// shardOwned is a shard a server's /metrics says it runs.
var shardOwned = regexp.MustCompile(`(?m)^capstan_executor_shard_owned\{shard="(shard-\d+)"\} 1$`)

// waitSpread waits until the servers hold every shard between them, each
// its fair share: a replica that joined late has been handed its shards.
// Nothing announces it, so the servers' /metrics are read every 100 ms.
func waitSpread(ctx context.Context, servers []string) error {
	n := len(servers)
	var held []int
	for {
		seen := map[string]bool{}
		even := true
		held = held[:0]
		for _, s := range servers {
			owned, err := ownedShards(s)
			if err != nil {
				return err
			}
			held = append(held, len(owned))
			for _, k := range owned {
				seen[k] = true
			}
			even = even && len(owned) >= shard.Shards/n && len(owned) <= shard.Shards/n+1
		}
		if even && len(seen) == shard.Shards {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the shards never spread over the %d servers (they hold %v)", n, held)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ownedShards reads the shards a server runs from its /metrics.
func ownedShards(server string) ([]string, error) {
	resp, err := http.Get(server + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range shardOwned.FindAllSubmatch(body, -1) {
		out = append(out, string(m[1]))
	}
	return out, nil
}

// watchEnds subscribes to the organization's operations on every server
// and returns a channel closed once each of ops was seen ended.
func watchEnds(ctx context.Context, c config, ops []string) (<-chan struct{}, error) {
	want := map[string]bool{}
	for _, op := range ops {
		want[op] = true
	}
	var mu sync.Mutex
	ended := make(chan struct{})
	var conns []*gqlws.Conn
	for _, s := range c.servers {
		conn, err := gqlws.Dial(ctx, s+"/graphql", c.token)
		if err == nil {
			err = conn.Subscribe("ends", `subscription { operations { id status } }`, nil)
		}
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return nil, fmt.Errorf("subscribe to %s's operations: %w", s, err)
		}
		conns = append(conns, conn)
	}
	for _, conn := range conns {
		go func() {
			defer conn.Close()
			for {
				m, err := conn.Next()
				if err != nil {
					return // closed: the run ended (or failed: the wait times out and says so)
				}
				var p struct {
					Data struct{ Operations struct{ ID, Status string } }
				}
				if m.Type != "next" || json.Unmarshal(m.Payload, &p) != nil || !terminal(p.Data.Operations.Status) {
					continue
				}
				mu.Lock()
				if want[p.Data.Operations.ID] {
					delete(want, p.Data.Operations.ID)
					if len(want) == 0 {
						close(ended)
					}
				}
				done := len(want) == 0
				mu.Unlock()
				if done {
					return
				}
			}
		}()
	}
	go func() { // the subscriptions end with the run
		select {
		case <-ended:
		case <-ctx.Done():
		}
		for _, conn := range conns {
			conn.Close()
		}
	}()
	return ended, nil
}

// terminal reports whether a status as GraphQL shows it (the domain's,
// upper-cased) is an end.
func terminal(status string) bool {
	return capstan.OperationStatus(strings.ToLower(status)).Terminal()
}

// releaseAll approves every operation's gate, eight at a time, through
// the servers in turn, and returns when the first was released.
func releaseAll(c config, ops []string) (time.Time, error) {
	first := time.Now()
	sem := make(chan struct{}, 8)
	errs := make(chan error, len(ops))
	var wg sync.WaitGroup
	for i, op := range ops {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := gql(c.servers[i%len(c.servers)], c.token+"-sre", `mutation($op: ID!) { decideGate(input: {operation: $op, node: "hold", approve: true}) { status } }`, map[string]any{"op": op}, nil)
			if err != nil {
				errs <- fmt.Errorf("release %s: %w", op, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return first, <-errs // nil when none failed
}

// lastEnd reads every operation's status and end, and returns the latest
// end; an operation that did not succeed is an error.
func lastEnd(c config, ops []string) (time.Time, error) {
	var last time.Time
	for _, op := range ops {
		var st struct {
			Operation struct {
				Status      string
				CompletedAt time.Time
			}
		}
		if err := gql(c.server, c.token, `query($id: ID!) { operation(id: $id) { status completedAt } }`, map[string]any{"id": op}, &st); err != nil {
			return last, err
		}
		if st.Operation.Status != "SUCCEEDED" {
			return last, fmt.Errorf("operation %s ended %s", op, st.Operation.Status)
		}
		if st.Operation.CompletedAt.After(last) {
			last = st.Operation.CompletedAt
		}
	}
	return last, nil
}
