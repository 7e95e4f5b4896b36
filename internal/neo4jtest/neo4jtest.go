// Package neo4jtest gives tests a real Neo4j 5 server. With NEO4J_URI set it
// uses that server. Otherwise it starts a throwaway Neo4j 5.26 Community on
// 127.0.0.1 (free port, temporary data directory, stopped at the end):
// through testcontainers-go when a Docker engine answers, otherwise through
// scripts/neo4j/run.sh (Neo4j's jars from Maven Central, Java 17). It never
// skips: if no server can start, the caller fails with the reason.
package neo4jtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/capstan-dev/capstan/internal/reporoot"
)

// Server is a Neo4j the tests may use.
type Server struct {
	URI      string
	User     string
	Password string
	// How it was started: "external", "docker" or "script".
	Kind string

	stopFn  func() error                    // stop the process, keep the data
	startFn func(ctx context.Context) error // start it again
	closeFn func() error                    // stop and remove everything (external: give the turn back)
	mu      sync.Mutex
}

// StartTimeout bounds a start, including a first download of the jars.
const StartTimeout = 5 * time.Minute

// Start returns a server of NEO4J_URI (one, or a comma-separated pool),
// emptied, once the caller has its turn on it (shared.go), or starts a
// throwaway one. Close gives the turn back.
func Start(ctx context.Context) (*Server, error) {
	if uris := os.Getenv("NEO4J_URI"); uris != "" {
		uri, release, err := takeTurn(ctx, strings.Split(uris, ","))
		if err != nil {
			return nil, err
		}
		s := &Server{URI: uri, User: os.Getenv("NEO4J_USER"), Password: os.Getenv("NEO4J_PASSWORD"), Kind: "external", closeFn: release}
		if err := wipe(ctx, s); err != nil {
			return nil, errors.Join(err, release())
		}
		return s, nil
	}
	return StartOwn(ctx)
}

// StartOwn always starts a new server this process controls (Stop/Restart),
// for tests that take Neo4j down on purpose.
func StartOwn(ctx context.Context) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if dockerAnswers(ctx) {
		return startDocker(ctx, port)
	}
	return startScript(ctx, port)
}

// Stop stops a server this process started, keeping its data, so Restart
// can bring it back on the same address. An external server cannot be stopped.
func (s *Server) Stop() error {
	if s.stopFn == nil {
		return errors.New("neo4jtest: an external server cannot be stopped")
	}
	return s.stopFn()
}

// Restart starts a stopped server again on the same port and data.
func (s *Server) Restart(ctx context.Context) error {
	if s.startFn == nil {
		return errors.New("neo4jtest: an external server cannot be restarted")
	}
	return s.startFn(ctx)
}

// Close stops a server this process started and removes its data; an
// external server is left alone.
func (s *Server) Close() error {
	if s.closeFn == nil {
		return nil
	}
	return s.closeFn()
}

// freePort picks a free port below the kernel's ephemeral range: a port
// from that range could be taken, while the server is stopped for a
// restart test, by an outgoing connection's local port (even one that
// connects to itself while retrying the stopped server).
func freePort() (int, error) {
	low := 32768
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(data)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 12000 {
				low = n
			}
		}
	}
	for i := 0; i < 100; i++ {
		port := 10000 + rand.IntN(low-10000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, errors.New("neo4jtest: no free port below the ephemeral range")
}

func dockerAnswers(ctx context.Context) bool {
	if os.Getenv("CAPSTAN_NEO4J_NO_DOCKER") != "" {
		return false
	}
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return false
	}
	defer p.Close()
	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return p.Health(hctx) == nil
}

func startDocker(ctx context.Context, port int) (*Server, error) {
	hostPort := fmt.Sprint(port)
	c, err := testcontainers.Run(ctx, "neo4j:5.26-community",
		testcontainers.WithExposedPorts("7687/tcp"),
		testcontainers.WithEnv(dockerEnv(settings())),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = network.PortMap{network.MustParsePort("7687/tcp"): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: hostPort}}}
		}),
		testcontainers.WithWaitStrategy(wait.ForLog("Bolt enabled on").WithStartupTimeout(StartTimeout)),
	)
	if err != nil {
		return nil, fmt.Errorf("neo4jtest: Docker answers but neo4j:5.26-community did not start: %w", err)
	}
	s := &Server{URI: "bolt://127.0.0.1:" + hostPort, Kind: "docker"}
	s.stopFn = func() error {
		timeout := 20 * time.Second
		return c.Stop(context.Background(), &timeout)
	}
	s.startFn = func(ctx context.Context) error { return c.Start(ctx) }
	s.closeFn = func() error { return c.Terminate(context.Background()) }
	return s, nil
}

func startScript(ctx context.Context, port int) (*Server, error) {
	root, err := reporoot.Dir()
	if err != nil {
		return nil, err
	}
	data, err := os.MkdirTemp("", "capstan-neo4j-")
	if err != nil {
		return nil, err
	}
	s := &Server{URI: fmt.Sprintf("bolt://127.0.0.1:%d", port), Kind: "script"}
	script := filepath.Join(root, "scripts", "neo4j", "run.sh")
	var cmd *exec.Cmd
	var done chan struct{}
	s.startFn = func(ctx context.Context) error {
		c, d, err := runScript(ctx, script, port, data)
		if err != nil {
			return err
		}
		s.mu.Lock()
		cmd, done = c, d
		s.mu.Unlock()
		return nil
	}
	s.stopFn = func() error {
		s.mu.Lock()
		c, d := cmd, done
		cmd = nil
		s.mu.Unlock()
		if c == nil {
			return nil
		}
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
		select {
		case <-d:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			<-d
		}
		return nil
	}
	// Its data goes with it: nothing is left to shut down cleanly for, and
	// a clean shutdown (a checkpoint) takes seconds.
	s.closeFn = func() error {
		s.mu.Lock()
		c, d := cmd, done
		cmd = nil
		s.mu.Unlock()
		if c != nil {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			<-d
		}
		return os.RemoveAll(data)
	}
	if err := s.startFn(ctx); err != nil {
		os.RemoveAll(data)
		return nil, err
	}
	return s, nil
}

// runScript starts run.sh in its own process group and waits for its
// ready line. If the test binary dies, the kernel kills the server too.
func runScript(ctx context.Context, script string, port int, data string) (*exec.Cmd, chan struct{}, error) {
	cmd := exec.Command("bash", script, fmt.Sprint(port), data)
	cmd.Env = append(os.Environ(), "CAPSTAN_NEO4J_JAVA_OPTS="+javaOpts(), "CAPSTAN_NEO4J_CONFIG="+scriptConfig(settings()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	var logs strings.Builder
	var logMu sync.Mutex
	errOut, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("neo4jtest: cannot run %s: %w", script, err)
	}
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			if strings.Contains(sc.Text(), "neo4j ready") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	go func() {
		sc := bufio.NewScanner(errOut)
		for sc.Scan() {
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
		}
	}()
	go func() { _ = cmd.Wait(); close(done) }()
	tail := func() string {
		logMu.Lock()
		defer logMu.Unlock()
		t := logs.String()
		if len(t) > 4000 {
			t = t[len(t)-4000:]
		}
		return t
	}
	select {
	case <-ready:
		return cmd, done, nil
	case <-done:
		return nil, nil, fmt.Errorf("neo4jtest: Neo4j did not start (no Docker engine; %s exited %v):\n%s", script, cmd.ProcessState, tail())
	case <-time.After(StartTimeout):
	case <-ctx.Done():
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	return nil, nil, fmt.Errorf("neo4jtest: Neo4j did not become ready in time:\n%s", tail())
}

// javaOpts are a test server's extra JVM options: CAPSTAN_NEO4J_JAVA_OPTS
// when set (even empty: `make bench` measures with the full JIT), else C1
// alone — a test's server is small and short-lived, and the C2 compiler
// spent more CPU starting one than the tests spent using it.
func javaOpts() string {
	if opts, ok := os.LookupEnv("CAPSTAN_NEO4J_JAVA_OPTS"); ok {
		return opts
	}
	return "-XX:TieredStopAtLevel=1"
}

// testSettings are a test server's Neo4j settings. A test empties its
// database and fills it again within seconds, so the statistics a cached
// plan was made from go stale all the time, and Neo4j would plan the
// query again (every 10 s by default) for data too small for the plan to
// matter; and ONLY_WHEN_HOT expressions compile every query a second time
// once it has run ten times. Planning was half of the pool's CPU through
// a run of cmd/capstan's tests (measured with JFR; docs/NEO4J.md). A
// benchmark's server keeps Neo4j's defaults (CAPSTAN_NEO4J_CONFIG=).
var testSettings = []string{
	"dbms.cypher.min_replan_interval=1h",
	"internal.cypher.expression_engine=INTERPRETED",
}

// settings are a test server's Neo4j settings, "name=value":
// CAPSTAN_NEO4J_CONFIG's (";"-separated) when set, even empty, else
// testSettings.
func settings() []string {
	if conf, ok := os.LookupEnv("CAPSTAN_NEO4J_CONFIG"); ok {
		var out []string
		for _, kv := range strings.Split(conf, ";") {
			if kv = strings.TrimSpace(kv); kv != "" {
				out = append(out, kv)
			}
		}
		return out
	}
	return testSettings
}

// scriptConfig is settings as run.sh takes them (CAPSTAN_NEO4J_CONFIG).
func scriptConfig(settings []string) string { return strings.Join(settings, ";") }

// dockerEnv is settings as the neo4j image takes them: NEO4J_ and the
// name with "_" doubled and "." as "_".
func dockerEnv(settings []string) map[string]string {
	env := map[string]string{"NEO4J_AUTH": "none"}
	for _, kv := range settings {
		name, value, _ := strings.Cut(kv, "=")
		env["NEO4J_"+strings.ReplaceAll(strings.ReplaceAll(name, "_", "__"), ".", "_")] = value
	}
	return env
}

// Auth is the driver's token for the server's user (none without one).
func (s *Server) Auth() neo4j.AuthToken {
	if s.User == "" {
		return neo4j.NoAuth()
	}
	return neo4j.BasicAuth(s.User, s.Password, "")
}
