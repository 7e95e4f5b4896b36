package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capstan-dev/capstan/gqlws"
	"github.com/capstan-dev/capstan/internal/metrics"
	"github.com/capstan-dev/capstan/internal/neo4jtest"
)

type report struct {
	memBefore, memAfter    serverMemory
	latencies              []time.Duration
	closing                chan struct{}     // closed when every subscription ended: connections close
	byEvent                [][]time.Duration // each subscriber's latencies, in event order (-per-event)
	events, deliveries     int64
	gaps, duplicates       int64
	overflows, otherErrors int64
	// firstError is what the first of the other errors said.
	firstError atomic.Value
	lastEvent  time.Time
	dialTime   time.Duration
	// released is when the gates opened (unix ns; read by subscribers):
	// only events committed after it count as live deliveries.
	released atomic.Int64
}

// serverMemory is what the server's /metrics says of its memory.
type serverMemory struct{ rss, heap, stack, goroutines float64 }

func run(c config) (*report, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.window)
	defer cancel()
	if c.server == "" {
		urls, stop, err := startServers(ctx, c)
		if err != nil {
			return nil, err
		}
		defer stop()
		c.server, c.servers = urls[0], urls
	}
	if len(c.servers) == 0 {
		c.servers = []string{c.server}
	}
	ops, err := startOperations(c)
	if err != nil {
		return nil, err
	}
	r := &report{closing: make(chan struct{})}
	defer close(r.closing)
	if r.memBefore, err = memory(c.server); err != nil {
		return nil, err
	}
	subs, err := subscribe(ctx, c, ops, r)
	if err != nil {
		return nil, err
	}
	time.Sleep(c.hold) // let the server settle with every subscription idle
	if r.memAfter, err = memory(c.server); err != nil {
		return nil, err
	}
	r.released.Store(time.Now().UnixNano())
	if c.cpuProfile != "" {
		profiled := profileCPU(c.server, c.cpuProfile, c.step*time.Duration(c.nodes)+5*time.Second) // the deliveries run late under load
		defer func() { <-profiled }()
	}
	// Operations are released spread over one job step, so their events
	// interleave rather than arrive in synchronized bursts.
	for i, op := range ops {
		if i > 0 {
			time.Sleep(c.step / time.Duration(len(ops)))
		}
		if err := gql(c.servers[(i+1)%len(c.servers)], c.token+"-sre", `mutation($op: ID!) { decideGate(input: {operation: $op, node: "hold", approve: true}) { status } }`, map[string]any{"op": op}, nil); err != nil {
			return nil, fmt.Errorf("release %s: %w", op, err)
		}
	}
	perOp := map[string]int64{} // live events committed per operation
	for _, s := range subs {
		<-s.done
		if c.perEvent {
			r.byEvent = append(r.byEvent, s.latencies)
		}
		r.latencies = append(r.latencies, s.latencies...)
		r.deliveries += s.received
		if s.lastAt.After(r.lastEvent) {
			r.lastEvent = s.lastAt
		}
		perOp[s.op] = max(perOp[s.op], int64(len(s.latencies)))
	}
	for _, n := range perOp {
		r.events += n
	}
	return r, nil
}

// startServer runs `capstan serve` on a fresh embedded store (or with
// the extra arguments given, a Neo4j) with the load pack: a gate that
// holds, then a chain of simulated jobs.
func startServer(c config, extra []string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "capstan-load")
	if err != nil {
		return "", nil, err
	}
	packs := filepath.Join(dir, "packs")
	if err := os.MkdirAll(packs, 0o755); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(packs, "load.yaml"), loadPack(c.nodes, c.step), 0o644); err != nil {
		return "", nil, err
	}
	// One token opens every subscription: the per-token rate limits would
	// measure themselves, not the fan-out, so they are off here.
	cmd := exec.Command(c.capstan, "serve", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--packs", packs, "--workers", "256",
		"--rate-limit", "0", "--cost-rate-limit", "0", "--subscription-limit", "0", "--max-connections-per-client", "0")
	cmd.Args = append(cmd.Args, extra...)
	cmd.Env = append(os.Environ(), "CAPSTAN_DEV_TOKEN="+c.token, "CAPSTAN_PPROF=1", "CAPSTAN_SECRET_KEY="+loadSecretKey)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start %s (run make build first): %w", c.capstan, err)
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	addr := regexp.MustCompile(`"addr":"(http://[^"]+)"`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := addr.FindStringSubmatch(sc.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			for i := 0; i < 300; i++ {
				if resp, err := http.Get(m[1] + "/readyz"); err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						return m[1], stop, nil
					}
				}
				time.Sleep(100 * time.Millisecond)
			}
			stop()
			return "", nil, fmt.Errorf("server at %s never became ready", m[1])
		}
	}
	stop()
	return "", nil, fmt.Errorf("server exited before listening")
}

func loadPack(nodes int, step time.Duration) []byte {
	var b bytes.Buffer
	b.WriteString(`id: load
version: 1.0.0
capabilities:
  - {key: load.target, category: test}
scenarios:
  - id: load.run
    action: run
    target_resource_type: load.target
    plan:
      nodes:
        - {id: hold, type: gate, title: Hold, gate: {type: approval, reason: load test, required_roles: [sre]}}
`)
	prev := "hold"
	for i := 1; i <= nodes; i++ {
		fmt.Fprintf(&b, "        - {id: j%d, type: job, title: J%d, after: [%s], job: {run: {runner: sim, duration: %s}, outputs: {evidence: [{name: ok, type: sim}]}}}\n", i, i, prev, step)
		prev = fmt.Sprintf("j%d", i)
	}
	return b.Bytes()
}

// startOperations starts the operations; each holds at its gate.
func startOperations(c config) ([]string, error) {
	var ops []string
	for i := 0; i < c.operations; i++ {
		var in struct{ CreateIntent struct{ ID string } }
		if err := gql(c.server, c.token, `mutation { createIntent(input: {action: "run", targetResourceType: "load.target", constraints: {environment: "dev"}}) { id } }`, nil, &in); err != nil {
			return nil, err
		}
		var plan struct{ PlanIntent struct{ ID, Status string } }
		if err := gql(c.server, c.token, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status } }`, map[string]any{"id": in.CreateIntent.ID}, &plan); err != nil {
			return nil, err
		}
		var op struct{ StartOperation struct{ ID string } }
		if err := gql(c.server, c.token, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan.PlanIntent.ID}, &op); err != nil {
			return nil, err
		}
		ops = append(ops, op.StartOperation.ID)
	}
	for _, op := range ops {
		for {
			var st struct{ Operation struct{ Status string } }
			if err := gql(c.server, c.token, `query($id: ID!) { operation(id: $id) { status } }`, map[string]any{"id": op}, &st); err != nil {
				return nil, err
			}
			if st.Operation.Status == "WAITING" {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return ops, nil
}

// subscriber follows one operation's timeline on its own connection.
type subscriber struct {
	op        string
	last      int64
	done      chan struct{}
	latencies []time.Duration
	received  int64
	lastAt    time.Time
}

// subscribe opens the subscriptions, perConnection of them on each
// WebSocket connection, spread round-robin over the operations.
func subscribe(ctx context.Context, c config, ops []string, r *report) ([]*subscriber, error) {
	subs := make([]*subscriber, c.subscribers)
	for i := range subs {
		subs[i] = &subscriber{op: ops[i%len(ops)], done: make(chan struct{})}
	}
	per := max(1, c.perConnection)
	sem := make(chan struct{}, c.dialers)
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for first := 0; first < len(subs); first += per {
		group := subs[first:min(first+per, len(subs))]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			conn, err := gqlws.Dial(ctx, c.servers[(first/per)%len(c.servers)]+"/graphql", c.token)
			for i, s := range group {
				if err == nil {
					err = conn.Subscribe(strconv.Itoa(i), `subscription($op: ID!) { operationEvents(operation: $op) { cursor node { sequence at } } }`, map[string]any{"op": s.op})
				}
			}
			if err != nil {
				failed.Store(err)
				for _, s := range group {
					close(s.done)
				}
				return
			}
			go follow(conn, group, r, r.closing)
		}()
	}
	wg.Wait()
	r.dialTime = time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	return subs, nil
}

// follow reads one connection's messages for its subscriptions (ids are
// their indexes in group) until every one has ended, and closes the
// connection when closing closes: a dashboard stays connected after an
// operation ends, and 10,000 connections closing at once would measure
// their teardown in the latency of the last events of the others.
func follow(conn *gqlws.Conn, group []*subscriber, r *report, closing <-chan struct{}) {
	defer func() {
		<-closing
		conn.Close()
	}()
	open := len(group)
	end := func(s *subscriber) {
		close(s.done)
		open--
	}
	for open > 0 {
		m, err := conn.Next()
		if err != nil {
			r.firstError.CompareAndSwap(nil, "connection: "+err.Error())
			for _, s := range group {
				select {
				case <-s.done:
				default:
					atomic.AddInt64(&r.otherErrors, 1)
					close(s.done)
				}
			}
			return
		}
		i, err := strconv.Atoi(m.ID)
		if err != nil || i < 0 || i >= len(group) {
			continue
		}
		s := group[i]
		switch m.Type {
		case "complete":
			end(s)
			continue
		case "error":
			if strings.Contains(string(m.Payload), "OVERFLOW") {
				atomic.AddInt64(&r.overflows, 1)
			} else {
				atomic.AddInt64(&r.otherErrors, 1)
				r.firstError.CompareAndSwap(nil, "error message: "+string(m.Payload))
			}
			end(s)
			continue
		}
		s.record(m, time.Now(), r)
	}
}

// record checks one event's place in the timeline and its latency.
func (s *subscriber) record(m gqlws.Message, now time.Time, r *report) {
	n, ok := eventOf(m.Payload)
	if !ok {
		atomic.AddInt64(&r.otherErrors, 1)
		r.firstError.CompareAndSwap(nil, "not an event: "+string(m.Payload))
		return
	}
	switch {
	case n.Sequence <= s.last:
		atomic.AddInt64(&r.duplicates, 1)
	case n.Sequence > s.last+1:
		atomic.AddInt64(&r.gaps, 1)
	}
	s.last = n.Sequence
	s.received++
	if released := r.released.Load(); released > 0 && n.At.UnixNano() > released {
		s.latencies = append(s.latencies, now.Sub(n.At))
		s.lastAt = n.At
	}
}

// memory reads the server's memory figures from /metrics, after a
// garbage collection when the server offers one (/debug/pprof, which the
// load test turns on for the server it starts): what is measured is what
// the subscriptions hold, not the garbage their setup left.
// profileCPU saves the server's CPU profile over d (its /debug/pprof) to
// file, in the background; the channel closes when it is written.
func profileCPU(server, file string, d time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", server, max(1, int(d.Seconds()))))
		if err != nil {
			fmt.Fprintln(os.Stderr, "capstan-load: cpu profile:", err)
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(file)
		if err == nil {
			_, err = io.Copy(f, resp.Body)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "capstan-load: cpu profile:", err)
		}
	}()
	return done
}

func memory(server string) (serverMemory, error) {
	if resp, err := http.Get(server + "/debug/pprof/heap?gc=1"); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	g, err := metrics.Scrape(server)
	if err != nil {
		return serverMemory{}, err
	}
	return serverMemory{rss: g["process_resident_memory_bytes"], heap: g["go_memstats_heap_inuse_bytes"],
		stack: g["go_memstats_stack_inuse_bytes"], goroutines: g["go_goroutines"]}, nil
}

func gql(server, token, query string, vars map[string]any, into any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, server+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out struct {
		Data   json.RawMessage
		Errors []gqlws.Error
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return err
	}
	if len(out.Errors) > 0 {
		return out.Errors[0]
	}
	if into != nil {
		return json.Unmarshal(out.Data, into)
	}
	return nil
}

func (r *report) print(w io.Writer, c config) {
	sort.Slice(r.latencies, func(i, j int) bool { return r.latencies[i] < r.latencies[j] })
	pct := func(p float64) time.Duration {
		if len(r.latencies) == 0 {
			return 0
		}
		return r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))]
	}
	n := float64(c.subscribers)
	wall := r.lastEvent.Sub(time.Unix(0, r.released.Load())).Seconds()
	fmt.Fprintf(w, "subscribers %d over %d operations, %d per connection (%d jobs of %s each); connected in %s\n",
		c.subscribers, c.operations, max(1, c.perConnection), c.nodes, c.step, r.dialTime.Round(time.Millisecond))
	fmt.Fprintf(w, "idle memory per subscription: RSS %.1f KB, heap+stacks %.1f KB (heap %.1f, stacks %.1f; goroutines %.0f -> %.0f)\n",
		(r.memAfter.rss-r.memBefore.rss)/n/1024, (r.memAfter.heap+r.memAfter.stack-r.memBefore.heap-r.memBefore.stack)/n/1024,
		(r.memAfter.heap-r.memBefore.heap)/n/1024, (r.memAfter.stack-r.memBefore.stack)/n/1024, r.memBefore.goroutines, r.memAfter.goroutines)
	fmt.Fprintf(w, "commit-to-client latency: p50 %s, p99 %s, max %s (%d live deliveries)\n", pct(0.50).Round(100*time.Microsecond), pct(0.99).Round(100*time.Microsecond), pct(1).Round(100*time.Microsecond), len(r.latencies))
	if wall > 0 {
		fmt.Fprintf(w, "event rate held: %.0f committed events/s, %.0f deliveries/s over %.1fs\n", float64(r.events)/wall, float64(len(r.latencies))/wall, wall)
	}
	fmt.Fprintf(w, "gaps %d, duplicates %d, overflows %d, other errors %d\n", r.gaps, r.duplicates, r.overflows, r.otherErrors)
	if first, _ := r.firstError.Load().(string); first != "" {
		fmt.Fprintf(w, "the first other error: %s\n", first)
	}
	r.printPerEvent(w)
}

// printPerEvent prints, for the i-th live event of every subscriber, the
// latency percentiles across subscribers: where in a run the slow
// deliveries are.
func (r *report) printPerEvent(w io.Writer) {
	for i := 0; ; i++ {
		var l []time.Duration
		for _, s := range r.byEvent {
			if i < len(s) {
				l = append(l, s[i])
			}
		}
		if len(l) == 0 {
			return
		}
		slices.Sort(l)
		fmt.Fprintf(w, "event %3d: p50 %s, p99 %s, max %s (%d)\n", i+1, l[len(l)/2].Round(100*time.Microsecond),
			l[min(len(l)-1, len(l)*99/100)].Round(100*time.Microsecond), l[len(l)-1].Round(100*time.Microsecond), len(l))
	}
}

// loadSecretKey seals the secrets of the servers this tool starts (the
// replicas of one database share it).
var loadSecretKey = base64.StdEncoding.EncodeToString([]byte("capstan-load-secret-key-32-bytes"))

// startReplicas starts c.replicas servers on one Neo4j (c.neo4jURI, or a
// throwaway one), one after another (the first prepares the database).
func startReplicas(ctx context.Context, c config) ([]string, func(), error) {
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	uri := c.neo4jURI
	if uri == "" {
		db, err := neo4jtest.StartOwn(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("start Neo4j: %w", err)
		}
		stops = append(stops, func() { db.Close() })
		uri = db.URI
	}
	var urls []string
	for range c.replicas {
		url, stopOne, err := startServer(c, []string{"--store", "neo4j", "--neo4j-uri", uri})
		if err != nil {
			stop()
			return nil, nil, err
		}
		stops = append(stops, stopOne)
		urls = append(urls, url)
	}
	return urls, stop, nil
}
