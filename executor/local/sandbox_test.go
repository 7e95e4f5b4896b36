package local

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// hostileHost is a server's files as the sandbox sees them: a data
// directory with a store and two operations' sandboxes, a tokens file,
// and secrets in the server's environment.
type hostileHost struct {
	data, tokens  string
	work, outputs string // operation A's
	other         string // operation B's sandbox
	open          string // a directory anyone may write, outside /tmp and the data directory
	sb            *Sandbox
}

const (
	storeSecret = "STORE-SECRET-4711"
	tokenSecret = "TOKEN-SECRET-4711"
	envSecret   = "NEO4J-SECRET-4711"
	otherSecret = "OTHER-OPERATION-SECRET-4711"
	worldSecret = "WORLD-READABLE-4711"
)

// hostUnixSocket listens on a Unix socket anyone may connect to (mode
// 0777, as a careless daemon's), answering HOST-SOCKET.
func hostUnixSocket(t *testing.T, path string) string {
	t.Helper()
	l, err := net.Listen("unix", path)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(path, 0o777))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HOST-SOCKET\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	return path
}

func newHostileHost(t *testing.T, limits JobLimits, quota int64) *hostileHost {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the sandbox's user switch and namespaces need the server to run as root (CI does)")
	}
	t.Setenv("CAPSTAN_NEO4J_PASSWORD", envSecret)
	root := t.TempDir()
	h := &hostileHost{data: filepath.Join(root, "data"), tokens: filepath.Join(root, "tokens.yaml")}
	// The executor's layout: the operations' directories in a job
	// directory apart from the data directory (jobdir.go).
	h.work = filepath.Join(root, "jobs", "sandbox", "opA")
	h.outputs = filepath.Join(root, "jobs", "outputs", "opA")
	h.other = filepath.Join(root, "jobs", "sandbox", "opB")
	for _, d := range []string{h.data, h.work, h.outputs, h.other} {
		require.NoError(t, os.MkdirAll(d, 0o750))
	}
	require.NoError(t, os.WriteFile(filepath.Join(h.data, "store.db"), []byte(storeSecret), 0o600))
	require.NoError(t, os.WriteFile(h.tokens, []byte(tokenSecret), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(h.other, "secret"), []byte(otherSecret), 0o666))
	open, err := os.MkdirTemp("/var/lib", "capstan-open-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(open) })
	require.NoError(t, os.Chmod(open, 0o777))
	h.open = open
	h.sb = NewSandbox(SandboxConfig{Limits: limits, DiskQuota: quota, Hide: []string{h.data, h.tokens}, Slots: 4})
	require.True(t, h.sb.namespaces, "this host allows namespaces: %s", h.sb.Describe())
	return h
}

func (h *hostileHost) run(t *testing.T, script string, timeout time.Duration) job.Result {
	t.Helper()
	env := map[string]string{"CAPSTAN_OUTPUTS": h.outputs, "CAPSTAN_PARAM_NAME": "tempo", "DATA": h.data, "TOKENS": h.tokens,
		"OTHER": h.other, "OPEN": h.open, "SERVER_PID": fmt.Sprint(os.Getpid())}
	return ShellRunner{Sandbox: h.sb}.Run(context.Background(), job.Job{NodeID: "hostile", Dir: h.work, Outputs: h.outputs,
		Spec: capstan.RunSpec{Script: script, Timeout: timeout.String()}, Env: env})
}

func noSecrets(t *testing.T, out []byte) {
	t.Helper()
	for _, s := range []string{storeSecret, tokenSecret, envSecret, otherSecret} {
		require.NotContains(t, string(out), s)
	}
}

func TestSandboxedJobStillWorks(t *testing.T) {
	h := newHostileHost(t, JobLimits{}, 0)
	res := h.run(t, `set -e; id -u; echo "$HOME $PWD"; echo "made for $CAPSTAN_PARAM_NAME" > "$CAPSTAN_OUTPUTS/endpoint"; echo kept > notes`, 10*time.Second)
	require.NoError(t, res.Err, "%s", res.Output)
	require.Contains(t, string(res.Output), "/tmp/job /tmp/job")
	require.NotContains(t, string(res.Output), "\n0\n", "not root")
	data, err := os.ReadFile(filepath.Join(h.outputs, "endpoint"))
	require.NoError(t, err)
	require.Equal(t, "made for tempo\n", string(data))
	// The operation's next job (another uid) reads and changes what the
	// first one left.
	res = h.run(t, `set -e; cat notes; echo more >> notes; cat "$CAPSTAN_OUTPUTS/endpoint"`, 10*time.Second)
	require.NoError(t, res.Err, "%s", res.Output)
	require.Contains(t, string(res.Output), "kept\nmade for tempo")
}

func TestHostileJobs(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer listener.Close()
	go func() {
		for {
			c, err := listener.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("CONTROL-PLANE\n"))
			c.Close()
		}
	}()
	h := newHostileHost(t, JobLimits{CPUSeconds: 2, MemoryBytes: 256 << 20, Processes: 64, FileBytes: 8 << 20}, 32<<20)
	hostSocket := hostUnixSocket(t, filepath.Join(h.open, "s"))
	require.NoError(t, os.WriteFile(filepath.Join(h.open, "world"), []byte(worldSecret), 0o644))
	attacks := []struct {
		name, script string
		timeout      time.Duration
		kind         string // the failure expected ("" when the job may end well but learn nothing)
	}{
		{"read the server's environment", `env; cat /proc/$SERVER_PID/environ; cat /proc/1/environ | tr '\0' '\n'`, 5 * time.Second, ""},
		{"read the data directory", `cat "$DATA/store.db"; ls -la "$DATA" "$DATA/executor"; find / -name store.db 2>/dev/null | xargs cat`, 20 * time.Second, ""},
		{"read the tokens file", `cat "$TOKENS"`, 5 * time.Second, ""},
		{"read another operation's sandbox", `cat "$OTHER/secret"; cat ../*/secret; ls -la /tmp`, 5 * time.Second, ""},
		{"reach the control plane", fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3`, listener.Addr().(*net.TCPAddr).Port), 5 * time.Second, "exit:1"},
		{"kill the server", `kill -9 $SERVER_PID && echo KILLED`, 5 * time.Second, "exit:1"},
		{"become root again", `umount /tmp; mount -t proc proc /mnt; su -c id root </dev/null; touch /etc/capstan-was-here`, 5 * time.Second, "exit:1"},
		{"plant a file outside the sandbox", `echo planted > "$OPEN/planted" || echo planted > /var/lib/planted || echo planted > "$OPEN/../planted"`, 5 * time.Second, "exit:1"},
		{"make the host writable again", `mount -o remount,bind,rw / ; unshare -Urm sh -c 'mount -o remount,bind,rw / && echo x > /planted'; echo planted > "$OPEN/planted"`, 5 * time.Second, "exit:1"},
		{"fork bomb", `bomb() { bomb | bomb & }; bomb; sleep 30`, 4 * time.Second, "timeout"},
		{"run forever", `sleep 1000`, time.Second, "timeout"},
		{"burn the CPU", `while :; do :; done`, 30 * time.Second, "signal:killed"},
		{"one huge file", `head -c 100M /dev/zero > big`, 30 * time.Second, "exit:153"}, // 128 + SIGXFSZ
		{"fill the disk", `for i in $(seq 1 1000); do head -c 4M /dev/zero > "fill-$i" || true; done; sleep 5`, 30 * time.Second, "disk_quota"},
		{"take the memory", `python3 -c 'x = bytearray(1 << 30); print("GOT IT")'`, 30 * time.Second, "exit:1"},
		{"talk to a host socket", `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(64))' "` + hostSocket + `"`, 5 * time.Second, "exit:1"},
		{"make a user namespace", `unshare -Ur id && echo NESTED-USERNS`, 5 * time.Second, "exit:1"},
		{"make a user namespace from python", `python3 -c 'import os; os.unshare(os.CLONE_NEWUSER); print("NESTED-USERNS")'`, 5 * time.Second, "exit:1"},
		{"read world-readable host files", `cat "$OPEN/world"; ls /var/lib /opt /home /root /srv /sys /work /mnt 2>&1; find / -xdev -name world 2>/dev/null | xargs cat`, 10 * time.Second, ""},
		{"read the mount table", `cat /proc/self/mountinfo /proc/mounts`, 5 * time.Second, ""},
		// The job leads a session of its own, so the server's terminal (if
		// it was started from one) is not its controlling terminal: no
		// TIOCSTI into the operator's shell, no keystrokes read.
		{"type into the server's terminal", `set -- $(sed 's/^[0-9]* ([^)]*) //' /proc/self/stat); echo "session=$4 tty=$5"; ` +
			`python3 -c 'import fcntl,termios; t=open("/dev/tty","wb"); fcntl.ioctl(t, termios.TIOCSTI, b"x"); print("TYPED")'`, 5 * time.Second, "exit:1"},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			res := h.run(t, a.script, a.timeout)
			noSecrets(t, res.Output)
			require.NotContains(t, string(res.Output), "CONTROL-PLANE")
			require.NotContains(t, string(res.Output), "KILLED")
			require.NotContains(t, string(res.Output), "GOT IT")
			require.NotContains(t, string(res.Output), "HOST-SOCKET")
			require.NotContains(t, string(res.Output), "NESTED-USERNS")
			require.NotContains(t, string(res.Output), worldSecret)
			require.NotContains(t, string(res.Output), "TYPED")
			if a.name == "type into the server's terminal" {
				require.Contains(t, string(res.Output), "session=1 tty=0", "a session of its own, no controlling terminal")
			}
			if a.name == "read the mount table" {
				require.NotContains(t, string(res.Output), h.tokens, "no mount names the tokens file")
				require.NotContains(t, string(res.Output), h.data, "no mount names the data directory")
				require.NotContains(t, string(res.Output), "capstan-hidden", "nothing needed covering: the data directory is not in the job's root")
				require.NotContains(t, string(res.Output), h.open)
				require.Contains(t, string(res.Output), " /tmp/job ", "the test reads the table")
			}
			if a.kind != "" {
				require.Equal(t, a.kind, res.ErrKind, "%s", res.Output)
			}
			for _, planted := range []string{"/etc/capstan-was-here", filepath.Join(h.open, "planted"), "/var/lib/planted", "/planted"} {
				_, err := os.Stat(planted)
				require.True(t, os.IsNotExist(err), planted)
			}
			require.NoError(t, os.RemoveAll(h.work))
			require.NoError(t, os.MkdirAll(h.work, 0o750))
		})
	}
}

// TestADaemonDoesNotOutliveItsJob: what a job leaves running is killed
// when the job ends, and a fork bomb in one operation does not keep
// another's job from running.
func TestADaemonDoesNotOutliveItsJob(t *testing.T) {
	h := newHostileHost(t, JobLimits{Processes: 32}, 0)
	marker := fmt.Sprintf("capstan-daemon-%d", time.Now().UnixNano())
	res := h.run(t, `setsid bash -c 'exec -a `+marker+` sleep 300' </dev/null >/dev/null 2>&1 & disown; echo started`, 10*time.Second)
	require.NoError(t, res.Err, "%s", res.Output)
	require.Eventually(t, func() bool { return !processRunning(marker) }, 5*time.Second, 50*time.Millisecond, "the daemon died with its job")

	var wg sync.WaitGroup
	wg.Add(1)
	bomb := fmt.Sprintf("capstan-bomb-%d", time.Now().UnixNano())
	go func() {
		defer wg.Done()
		h.run(t, `: `+bomb+`; bomb() { bomb | bomb & }; bomb; sleep 30`, 5*time.Second)
	}()
	// The bomb's shells (forks, named as the job) hold half its uid's
	// processes at least: it is taking them all.
	require.Eventually(t, func() bool { return processesNamed(bomb) >= 16 }, 5*time.Second, 5*time.Millisecond, "the bomb went off")
	other := h.run(t, `for i in 1 2 3 4 5 6 7 8; do /bin/true; done; echo fine`, 10*time.Second)
	require.NoError(t, other.Err, "%s", other.Output)
	require.Contains(t, string(other.Output), "fine")
	wg.Wait()
}

// processesNamed counts the processes whose command line holds marker.
func processesNamed(marker string) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), marker) {
			n++
		}
	}
	return n
}

func processRunning(marker string) bool { return processesNamed(marker) > 0 }

// TestHiddenPathsOutsideTheJobsRoot: a data directory and tokens file
// that file permissions would let any user read (0755/0644) are out of a
// job's sight wherever they are: outside /usr and /etc they are not in
// the job's root at all, even without Hide; inside /etc, Hide covers
// them. Without Hide, the same job reads the one in /etc.
func TestHiddenPathsOutsideTheJobsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the sandbox's namespaces need the server to run as root (CI does)")
	}
	var script string
	var hide []string
	for _, parent := range []string{"/var/lib", "/etc"} {
		root, err := os.MkdirTemp(parent, "capstan-sandbox-test-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(root) })
		require.NoError(t, os.Chmod(root, 0o755))
		data := filepath.Join(root, "data")
		require.NoError(t, os.MkdirAll(data, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(data, "store.db"), []byte(storeSecret), 0o644))
		tokens := filepath.Join(root, "tokens.yaml")
		require.NoError(t, os.WriteFile(tokens, []byte(tokenSecret), 0o644))
		script += fmt.Sprintf(`cat %q %q; ls %q; `, filepath.Join(data, "store.db"), tokens, data)
		hide = append(hide, data, tokens)
	}
	work, outputs := t.TempDir(), t.TempDir()
	run := func(hide []string) job.Result {
		sb := NewSandbox(SandboxConfig{Hide: hide, Slots: 2})
		return ShellRunner{Sandbox: sb}.Run(context.Background(), job.Job{NodeID: "peek", Dir: work, Outputs: outputs, Spec: capstan.RunSpec{Script: script, Timeout: "10s"}})
	}
	control := run(nil)
	require.Equal(t, 1, strings.Count(string(control.Output), storeSecret), "without Hide the one in /etc is readable, the one in /var/lib is not: %s", control.Output)
	hidden := run(hide)
	noSecrets(t, hidden.Output)
}

// TestAHiddenFileStaysHidden: a hidden path in /etc that is a symlink to
// another file in /etc hides that file too; a file an operator renames
// over the hidden one while a job runs (an editor, install, ansible's
// template) does not appear to the job either.
func TestAHiddenFileStaysHidden(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the sandbox's namespaces need the server to run as root (CI does)")
	}
	dir, err := os.MkdirTemp("/etc", "capstan-hide-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	real, link, tokens := filepath.Join(dir, "real"), filepath.Join(dir, "link"), filepath.Join(dir, "tokens.yaml")
	require.NoError(t, os.WriteFile(real, []byte("REAL-TOKEN-SECRET"), 0o644))
	require.NoError(t, os.Symlink(real, link))
	require.NoError(t, os.WriteFile(tokens, []byte(tokenSecret), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other"), []byte("VISIBLE"), 0o644))
	sb := NewSandbox(SandboxConfig{Hide: []string{link, tokens}, Slots: 2})
	work, outputs := t.TempDir(), t.TempDir()
	script := fmt.Sprintf(`cat %q %q; ls %q; : > ready; while [ ! -e go ]; do sleep 0.02; done; cat %q`, link, real, dir, tokens)
	done := make(chan job.Result, 1)
	go func() {
		done <- ShellRunner{Sandbox: sb}.Run(context.Background(), job.Job{NodeID: "peek", Dir: work, Outputs: outputs, Spec: capstan.RunSpec{Script: script, Timeout: "30s"}})
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(work, "ready")); return err == nil }, 20*time.Second, 10*time.Millisecond)
	rotated := filepath.Join(dir, ".tokens.new")
	require.NoError(t, os.WriteFile(rotated, []byte("ROTATED-TOKEN-SECRET"), 0o644))
	require.NoError(t, os.Rename(rotated, tokens))
	require.NoError(t, os.WriteFile(filepath.Join(work, "go"), nil, 0o666))
	res := <-done
	require.NotContains(t, string(res.Output), "REAL-TOKEN-SECRET", "the symlink's target is hidden too")
	require.NotContains(t, string(res.Output), "ROTATED-TOKEN-SECRET", "a file renamed over the hidden one stays hidden")
	noSecrets(t, res.Output)
	require.Contains(t, string(res.Output), "other", "the rest of the directory is there")
}

// TestWhatIsIsolated: a job is isolated only in namespaces of its own
// (as another uid, or in a user namespace); a root server that cannot
// make them refuses jobs like one that is not root, unless allowed.
func TestWhatIsIsolated(t *testing.T) {
	for _, c := range []struct {
		name                          string
		root, namespaces, userns, off bool
		allow                         bool
		isolated                      bool
		refusal, describes            string
	}{
		{name: "root with namespaces", root: true, namespaces: true, isolated: true, describes: "mount/pid/ipc/uts namespaces"},
		{name: "not root, user namespaces", userns: true, isolated: true, describes: "a user namespace per job"},
		{name: "root without namespaces", root: true, refusal: "root but cannot make mount namespaces"},
		{name: "root without namespaces, allowed", root: true, allow: true, describes: "NOT ISOLATED (--allow-unisolated-jobs): no namespaces on this host, only uids"},
		{name: "not root, no user namespaces", refusal: "not root and cannot make user namespaces"},
		{name: "off", root: true, namespaces: true, off: true, refusal: "--sandbox off"},
		{name: "off, allowed", root: true, off: true, allow: true, describes: "jobs run as the server's user"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Sandbox{cfg: SandboxConfig{Off: c.off, AllowUnisolated: c.allow}, root: c.root, namespaces: c.namespaces, userns: c.userns}
			require.Equal(t, c.isolated, s.Isolated())
			if c.refusal == "" {
				require.Empty(t, s.Refusal())
			} else {
				require.Contains(t, s.Refusal(), c.refusal)
				_, err := s.command("true", t.TempDir(), t.TempDir(), nil)
				require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err), "refused, never run")
			}
			if c.describes != "" {
				require.Contains(t, s.Describe(), c.describes)
			}
		})
	}
}

// TestAJobsVariablesNeverCarryCode: a variable that would make the
// prologue's bash (root in the job's namespaces), the loader or python
// run code of its choosing never reaches the job's environment, nor one
// that would replace its PATH or HOME.
func TestAJobsVariablesNeverCarryCode(t *testing.T) {
	env := jobEnviron("/tmp/job", map[string]string{"CAPSTAN_PARAM_X": "1", "BASH_ENV": "/tmp/job/x", "BASH_FUNC_id%%": "() { evil; }",
		"SHELLOPTS": "xtrace", "PS4": "$(evil)", "LD_PRELOAD": "/tmp/job/x.so", "PYTHONSTARTUP": "/tmp/job/x.py", "PATH": "/tmp/job", "ENV": "/tmp/job/x"})
	joined := strings.Join(env, "\n")
	require.Contains(t, joined, "CAPSTAN_PARAM_X=1")
	for _, bad := range []string{"BASH_ENV", "BASH_FUNC", "SHELLOPTS", "PS4", "LD_PRELOAD", "PYTHONSTARTUP", "PATH=/tmp/job", "\nENV="} {
		require.NotContains(t, joined, bad)
	}
}
