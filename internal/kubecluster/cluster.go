// Package kubecluster starts a real Kubernetes control plane on loopback
// for tests and demos: etcd, then kube-apiserver (TLS, a CA of
// its own, RBAC), kube-controller-manager and kube-scheduler from
// k8s.io/kubernetes, and kwok playing the kubelets of N nodes. The five
// components are one binary (tools/kubecluster), built once from pinned
// modules and cached (scripts/cluster.sh build). Real: the API, admission,
// RBAC, the controllers, the scheduler, watches. Played: the kubelets — no
// container runs; kwok moves pods through their phases (stages.yaml).
//
// Everything speaks to the cluster through its kubeconfig, as to any
// other cluster.
package kubecluster

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/capstan-dev/capstan/internal/reporoot"
)

//go:embed stages.yaml
var stages string

// Options says what cluster to start.
type Options struct {
	// Dir holds its certificates, etcd's data and every component's log;
	// a new temporary directory when empty.
	Dir string
	// Nodes are the kwok nodes made Ready at start (worker-1..3 when
	// nil).
	Nodes []string
	// PullFails are the nodes whose registry is unreachable: every pod
	// scheduled on one stays Pending in ErrImagePull (worker-3 when nil;
	// none when empty but not nil).
	PullFails []string
}

// DefaultNodes and DefaultPullFails are the seed's cluster: three
// workers, the third of which cannot reach the registry (SPEC §8).
var (
	DefaultNodes     = []string{"worker-1", "worker-2", "worker-3"}
	DefaultPullFails = []string{"worker-3"}
)

// Cluster is a running test cluster.
type Cluster struct {
	Dir string
	// Kubeconfig is the path of an administrator's kubeconfig (client
	// certificate in group system:masters, the CA pinned).
	Kubeconfig string
	// Server is the API server's URL; CA its certificate authority (PEM).
	Server string
	CA     []byte

	bin       string
	procs     []*process
	etcd      *process
	etcdURL   string
	etcdArgs  []string
	apiArgs   []string
	apiserver *process
	stopOnce  sync.Once
	mu        sync.Mutex
	// stopping ends the supervisors, which wg waits for.
	stopping chan struct{}
	wg       sync.WaitGroup
}

// process is one component, running in its own process group and killed
// with the process that started it (Pdeathsig), so that a test binary
// killed by a timeout leaves no cluster behind.
type process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
}

// Start starts a cluster and returns once its API answers and its nodes
// are Ready. It fails with the reason (and the failing component's last
// log lines) when a part cannot start.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if opts.Nodes == nil {
		opts.Nodes = DefaultNodes
	}
	if opts.PullFails == nil {
		opts.PullFails = DefaultPullFails
	}
	if opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp("", "capstan-kube-*"); err != nil {
			return nil, err
		}
	}
	c := &Cluster{Dir: opts.Dir, bin: bin, stopping: make(chan struct{})}
	if err := c.boot(ctx, opts); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// boot starts the components in order, each once the one it needs answers.
func (c *Cluster) boot(ctx context.Context, opts Options) (err error) {
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	c.etcdURL = etcdURL
	c.Server = fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	if err := c.writePKI(opts.PullFails); err != nil {
		return fmt.Errorf("kubecluster: certificates: %w", err)
	}
	c.etcdArgs = []string{"etcd", "--name", "capstan-test", "--data-dir", c.path("etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		"--initial-cluster", fmt.Sprintf("capstan-test=http://127.0.0.1:%d", ports[1]),
		// A test cluster is thrown away: its etcd need not survive a power cut.
		"--unsafe-no-fsync", "--log-level", "warn"}
	if c.etcd, err = c.launch("etcd", c.bin, c.etcdArgs...); err != nil {
		return err
	}
	c.apiArgs = c.apiserverArgs(etcdURL, ports[2])
	if c.apiserver, err = c.launch("kube-apiserver", c.bin, c.apiArgs...); err != nil {
		return err
	}
	if err := c.WaitReady(ctx, 90*time.Second); err != nil {
		return err
	}
	for _, part := range []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", c.controllerManagerArgs()},
		{"kube-scheduler", c.schedulerArgs()},
		{"kwok", c.kwokArgs(ports[3])},
	} {
		if err := c.supervise(part.name, part.args); err != nil {
			return err
		}
	}
	if err := c.addNodes(ctx, opts.Nodes); err != nil {
		return err
	}
	return nil
}

func (c *Cluster) path(name string) string { return filepath.Join(c.Dir, name) }

func (c *Cluster) apiserverArgs(etcdURL string, port int) []string {
	return []string{"apiserver",
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file=" + c.path("apiserver.crt"), "--tls-private-key-file=" + c.path("apiserver.key"),
		"--client-ca-file=" + c.path("ca.crt"),
		"--service-account-key-file=" + c.path("sa.pub"), "--service-account-signing-key-file=" + c.path("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
		// The kubernetes Service's endpoint would be 127.0.0.1, which an
		// EndpointSlice may not hold; nothing in this cluster dials it.
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + c.path("apiserver-certs"),
		"--v=1",
	}
}

func (c *Cluster) controllerManagerArgs() []string {
	kc := c.path("controller-manager.kubeconfig")
	return []string{"controller-manager",
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--service-account-private-key-file=" + c.path("sa.key"), "--root-ca-file=" + c.path("ca.crt"),
		"--use-service-account-credentials=true",
		"--cluster-signing-cert-file=" + c.path("ca.crt"), "--cluster-signing-key-file=" + c.path("ca.key"),
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0",
		"--node-monitor-grace-period=40s",
		"--v=1",
	}
}

func (c *Cluster) schedulerArgs() []string {
	kc := c.path("scheduler.kubeconfig")
	return []string{"scheduler",
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0",
		"--v=1",
	}
}

func (c *Cluster) kwokArgs(port int) []string {
	return []string{"kwok",
		"--kubeconfig=" + c.Kubeconfig,
		"--config=" + c.path("kwok.yaml"),
		"--manage-all-nodes=true",
		"--node-ip=10.0.0.1",
		"--cidr=10.244.0.0/16",
		fmt.Sprintf("--server-address=127.0.0.1:%d", port),
		"--node-lease-duration-seconds=40",
	}
}

// launch starts one component, its output in Dir/<name>.log.
func (c *Cluster) launch(name, bin string, args ...string) (*process, error) {
	log, err := os.OpenFile(c.path(name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = c.Dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.Dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("kubecluster: starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p, nil
}

// supervise starts a component and starts it again whenever it ends
// until the cluster stops, as a node's kubelet restarts its static pods:
// the controller manager exits when an API server that has just started
// refuses it before its RBAC is loaded, and a real one would be back a
// moment later.
func (c *Cluster) supervise(name string, args []string) error {
	p, err := c.launch(name, c.bin, args...)
	if err != nil {
		return err
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			select {
			case <-p.done:
			case <-c.stopping:
				return
			}
			select {
			case <-c.stopping:
				return
			case <-time.After(time.Second): // a supervisor's restart delay, as systemd's RestartSec
			}
			if p, err = c.launch(name, c.bin, args...); err != nil {
				return
			}
		}
	}()
	return nil
}

// LogTail is the last lines of a component's log, for a failure's reason.
func (c *Cluster) LogTail(name string, lines int) string {
	data, _ := os.ReadFile(c.path(name + ".log"))
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// Stop kills every component (SIGKILL: a test cluster is thrown away,
// and the API server's graceful shutdown takes seconds) and removes the
// cluster's directory.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		close(c.stopping)
		c.wg.Wait()
		c.mu.Lock()
		procs := slicesReversed(c.procs)
		c.mu.Unlock()
		for _, p := range procs {
			p.kill()
			p.log.Close()
		}
		_ = os.RemoveAll(c.Dir)
	})
}

func slicesReversed(ps []*process) []*process {
	out := make([]*process, len(ps))
	for i, p := range ps {
		out[len(ps)-1-i] = p
	}
	return out
}

// freePorts finds n ports free on loopback now.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Binary is the path of the cluster's binary, built by scripts/cluster.sh
// when it is not cached yet.
func Binary() (string, error) {
	root, err := reporoot.Dir()
	if err != nil {
		return "", err
	}
	out, err := exec.Command(filepath.Join(root, "scripts", "cluster.sh"), "build").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("kubecluster: building the test cluster's binary: %v\n%s", err, ee.Stderr)
		}
		return "", fmt.Errorf("kubecluster: building the test cluster's binary: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// KillAPIServer kills the API server with SIGKILL, as a crash would.
func (c *Cluster) KillAPIServer() { c.apiserver.kill() }

// StartAPIServer starts the API server again, on the same port, etcd and
// certificates, and waits until it is ready.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	p, err := c.launch("kube-apiserver", c.bin, c.apiArgs...)
	if err != nil {
		return err
	}
	c.apiserver = p
	return c.WaitReady(ctx, 90*time.Second)
}

// CompactEtcd compacts etcd's history up to its current revision, through
// its JSON gateway, and returns that revision: a watch that resumes from
// an older resourceVersion is then answered 410 Gone (too old), as after
// a long outage on a real cluster.
func (c *Cluster) CompactEtcd(ctx context.Context) (int64, error) {
	var head struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := c.etcdCall(ctx, "/v3/kv/range", `{"key": "Lw=="}`, &head); err != nil { // "/": any key gives the header
		return 0, err
	}
	rev, err := strconv.ParseInt(head.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("kubecluster: etcd's revision %q: %w", head.Header.Revision, err)
	}
	return rev, c.etcdCall(ctx, "/v3/kv/compaction", fmt.Sprintf(`{"revision": %d, "physical": true}`, rev), nil)
}

func (c *Cluster) etcdCall(ctx context.Context, path, body string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.etcdURL+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("kubecluster: etcd %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("kubecluster: etcd %s: %s: %s", path, resp.Status, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// StopEtcd stops etcd (SIGSTOP: it holds its connections and answers
// nothing, as a stalled store does); ResumeEtcd lets it go on.
func (c *Cluster) StopEtcd() { _ = syscall.Kill(c.etcd.cmd.Process.Pid, syscall.SIGSTOP) }

// ResumeEtcd resumes a stopped etcd.
func (c *Cluster) ResumeEtcd() { _ = syscall.Kill(c.etcd.cmd.Process.Pid, syscall.SIGCONT) }

// kill ends the process now, and waits for it.
func (p *process) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}
