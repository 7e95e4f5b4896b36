package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/capstan-dev/capstan"
)

// SandboxConfig says how jobs and command probes are confined. See
// docs/SANDBOX.md for what is isolated and what a deployment should add.
type SandboxConfig struct {
	// UIDBase is the first of Slots user ids jobs run as when the server
	// runs as root: every job running at once has a uid of its own, so one
	// job's process limit (counted per uid) or signals never touch
	// another's. Default 100000.
	UIDBase uint32
	// Slots is how many uids there are (default 64); a job waits for a free
	// one. At least the executor's Workers.
	Slots int
	// GID is the group of every job (default 65534, nogroup): the jobs of
	// one operation share its sandbox through it.
	GID uint32
	// Limits bound each job's processes.
	Limits JobLimits
	// Network keeps the host's network for jobs; without it a job has a
	// network namespace of its own with nothing in it.
	Network bool
	// Hide lists paths jobs must not see (the data directory, the tokens
	// file, the secret store): covered in the job's mount namespace.
	Hide []string
	// DiskQuota bounds the bytes an operation's sandbox and outputs hold;
	// a job that passes it is killed (default 1 GiB).
	DiskQuota int64
	// Off asks for no isolation at all (capstan serve --sandbox off).
	Off bool
	// AllowUnisolated runs shell jobs and command probes even where they
	// cannot be isolated (Off, or neither root nor user namespaces), with
	// the limits alone. Without it they are refused (ErrUnisolated).
	AllowUnisolated bool
}

// ErrKindUnisolated is the error kind of a job refused because the host
// cannot isolate it: never retried, as the host does not change between
// attempts.
const ErrKindUnisolated = "unisolated"

// JobLimits are resource limits (hard, per process) of a job.
type JobLimits struct {
	CPUSeconds  int   // default 600
	MemoryBytes int64 // address space; default 2 GiB
	Processes   int   // per uid; default 256
	FileBytes   int64 // largest file written; default 256 MiB
	OpenFiles   int   // default 256
}

// Sandbox confines job processes: an allow-listed environment, its own
// process group, resource limits; as root also another user and, where
// the kernel allows, mount, PID, IPC, UTS and network namespaces.
type Sandbox struct {
	cfg        SandboxConfig
	root       bool
	namespaces bool
	// userns: not root, but a user namespace (and mount, PID, IPC, UTS
	// and network namespaces in it) can be made.
	userns bool
	uids   chan uint32
}

// Where a job sees its sandbox and outputs inside its mount namespace.
const (
	jobHome    = "/tmp/job"
	jobOutputs = "/tmp/outputs"
)

// NewSandbox checks what this host allows: as root, a job runs as
// another user; namespaces are used when a probe process can enter them
// (and setpriv and mount are installed).
func NewSandbox(cfg SandboxConfig) *Sandbox {
	if cfg.UIDBase == 0 {
		cfg.UIDBase = 100000
	}
	if cfg.Slots <= 0 {
		cfg.Slots = 64
	}
	if cfg.GID == 0 {
		cfg.GID = 65534
	}
	if cfg.DiskQuota <= 0 {
		cfg.DiskQuota = 1 << 30
	}
	l := &cfg.Limits
	l.CPUSeconds = orDefault(l.CPUSeconds, 600)
	l.MemoryBytes = orDefault(l.MemoryBytes, 2<<30)
	l.Processes = orDefault(l.Processes, 256)
	l.FileBytes = orDefault(l.FileBytes, 256<<20)
	l.OpenFiles = orDefault(l.OpenFiles, 256)
	for i, p := range cfg.Hide {
		if abs, err := filepath.Abs(p); err == nil {
			cfg.Hide[i] = abs
		}
	}
	s := &Sandbox{cfg: cfg, root: os.Geteuid() == 0, uids: make(chan uint32, cfg.Slots)}
	for i := range cfg.Slots {
		s.uids <- cfg.UIDBase + uint32(i)
	}
	if !cfg.Off {
		s.namespaces = s.root && namespacesWork(false)
		s.userns = !s.root && namespacesWork(true)
	}
	return s
}

// Isolated reports whether jobs run isolated from the server: in mount,
// PID, IPC and UTS namespaces of their own that hide the data directory,
// as other users (root) or in a user namespace (not root). Another uid
// alone is not enough: a job would still read whatever the server's
// files leave readable to others (a tokens file of mode 0644).
func (s *Sandbox) Isolated() bool {
	return s != nil && !s.cfg.Off && (s.namespaces || s.userns)
}

// Refusal says why shell jobs and command probes are refused on this
// host, or "" when they run.
func (s *Sandbox) Refusal() string {
	if s == nil || s.Isolated() || s.cfg.AllowUnisolated {
		return ""
	}
	why := "--sandbox off"
	switch {
	case s.cfg.Off:
	case s.root:
		why = "the server is root but cannot make mount namespaces: a container without CAP_SYS_ADMIN, or a seccomp profile forbidding them"
	default:
		why = "the server is not root and cannot make user namespaces"
	}
	return "shell jobs and command probes are refused: they cannot be isolated (" + why + "), so they would read the data directory, the tokens and the secret store; start with --allow-unisolated-jobs to run them anyway (docs/SANDBOX.md)"
}

func orDefault[T int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Describe says what the sandbox does on this host (logged at start).
func (s *Sandbox) Describe() string {
	switch {
	case s == nil:
		return "off: jobs run as the server's user"
	case s.Refusal() != "":
		return "refusing shell jobs and command probes: " + s.Refusal()
	case !s.Isolated() && s.root && !s.cfg.Off:
		return fmt.Sprintf("NOT ISOLATED (--allow-unisolated-jobs): no namespaces on this host, only uids %d-%d and limits %+v", s.cfg.UIDBase, s.cfg.UIDBase+uint32(s.cfg.Slots)-1, s.cfg.Limits)
	case !s.Isolated():
		return fmt.Sprintf("NOT ISOLATED (--allow-unisolated-jobs): jobs run as the server's user with limits %+v", s.cfg.Limits)
	case s.userns:
		net := "no network"
		if s.cfg.Network {
			net = "the host's network"
		}
		return fmt.Sprintf("not root: a user namespace per job (the server's uid, without capabilities), mount/pid/ipc/uts namespaces, %s, limits %+v", net, s.cfg.Limits)
	case s.namespaces:
		net := "no network"
		if s.cfg.Network {
			net = "the host's network"
		}
		return fmt.Sprintf("uids %d-%d, mount/pid/ipc/uts namespaces, %s, limits %+v", s.cfg.UIDBase, s.cfg.UIDBase+uint32(s.cfg.Slots)-1, net, s.cfg.Limits)
	}
	return fmt.Sprintf("limits %+v; not root, so jobs run as the server's user", s.cfg.Limits)
}

// namespacesWork runs what a job's prologue needs the way jobs run, to
// learn whether the kernel (and a container around us) allows new
// namespaces — in a user namespace of their own when user is set — and
// the tools exist.
func namespacesWork(user bool) bool {
	for _, tool := range []string{"setpriv", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			return false
		}
	}
	cmd := exec.Command("bash", "-c", "mount --make-rprivate / && mount -o remount,bind,ro / && mount -t tmpfs capstan-probe /tmp && mount -t proc proc /proc")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: nsFlags(false)}
	if user {
		userNamespace(cmd.SysProcAttr)
	}
	cmd.Env = []string{"PATH=" + jobPath}
	return cmd.Run() == nil
}

// userNamespace makes the process's namespaces inside a user namespace
// of its own, in which the server's uid and gid are 0: its prologue may
// mount, and it then drops every capability before the job runs.
func userNamespace(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
}

func nsFlags(network bool) uintptr {
	f := uintptr(syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS)
	if !network {
		f |= syscall.CLONE_NEWNET
	}
	return f
}

// sandboxedJob is one job's process, ready to start, and what it holds.
type sandboxedJob struct {
	cmd     *exec.Cmd
	release func()
}

// command prepares bash running script in dir (the operation's sandbox)
// with outputs (its artifacts directory) and env (the job's own
// variables, host paths). Release must be called once the process ended.
func (s *Sandbox) command(script, dir, outputs string, own map[string]string) (*sandboxedJob, error) {
	if s == nil {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = dir
		cmd.Env = jobEnviron(dir, own)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return &sandboxedJob{cmd: cmd, release: func() {}}, nil
	}
	if !s.Isolated() && !s.cfg.AllowUnisolated {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "%s", s.Refusal())
	}
	if !s.Isolated() && (s.cfg.Off || !s.root) {
		cmd := exec.Command("bash", "-c", s.limitsPrologue()+`exec bash -c "$1"`, "capstan-job", script)
		cmd.Dir = dir
		cmd.Env = jobEnviron(dir, own)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		return &sandboxedJob{cmd: cmd, release: func() {}}, nil
	}
	if s.userns {
		args := append([]string{"-c", s.namespacePrologue(s.dropPrivileges()), "capstan-job", script, dir, outputs}, s.cfg.Hide...)
		cmd := exec.Command("bash", args...)
		cmd.Dir = dir
		cmd.Env = jobEnviron(jobHome, inNamespace(own, dir, outputs))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: nsFlags(s.cfg.Network)}
		userNamespace(cmd.SysProcAttr)
		return &sandboxedJob{cmd: cmd, release: func() {}}, nil
	}
	uid := <-s.uids
	release := func() { s.uids <- uid }
	if err := s.own(dir, outputs); err != nil {
		release()
		return nil, err
	}
	if !s.namespaces {
		cmd := exec.Command("bash", "-c", s.limitsPrologue()+`umask 007; exec bash -c "$1"`, "capstan-job", script)
		cmd.Dir = dir
		cmd.Env = jobEnviron(dir, own)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL,
			Credential: &syscall.Credential{Uid: uid, Gid: s.cfg.GID, Groups: []uint32{}}}
		return &sandboxedJob{cmd: cmd, release: release}, nil
	}
	args := append([]string{"-c", s.namespacePrologue(s.becomeUser(uid)), "capstan-job", script, dir, outputs}, s.cfg.Hide...)
	cmd := exec.Command("bash", args...)
	cmd.Dir = dir
	cmd.Env = jobEnviron(jobHome, inNamespace(own, dir, outputs))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: nsFlags(s.cfg.Network)}
	return &sandboxedJob{cmd: cmd, release: release}, nil
}

// own gives the operation's sandbox and outputs directories to root and
// the jobs' group, setgid and group-writable: every job of the operation
// (each with a uid of its own) reads and writes them, and what a job
// creates there (umask 007) belongs to the group too. Nothing inside is
// touched: a job may have left symlinks anywhere in them, and the server
// never follows one (safefile.go).
func (s *Sandbox) own(dirs ...string) error {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		info, err := os.Lstat(d)
		if err != nil {
			return fmt.Errorf("sandbox %s: %w", d, err)
		}
		if !info.IsDir() {
			return fmt.Errorf("sandbox %s: not a directory", d)
		}
		if err := os.Lchown(d, 0, int(s.cfg.GID)); err != nil {
			return fmt.Errorf("sandbox %s: %w", d, err)
		}
		if err := os.Chmod(d, 0o2770); err != nil {
			return fmt.Errorf("sandbox %s: %w", d, err)
		}
	}
	return nil
}

// limitsPrologue sets the job's hard limits (bash's ulimit: -v and -f in
// KiB); every value is a number the sandbox computed, never job input.
func (s *Sandbox) limitsPrologue() string {
	l := s.cfg.Limits
	return fmt.Sprintf("ulimit -HS -t %d -v %d -u %d -f %d -n %d -c 0 || exit 126; ",
		l.CPUSeconds, l.MemoryBytes>>10, l.Processes, l.FileBytes>>10, l.OpenFiles)
}

// namespacePrologue runs as root inside the job's new namespaces, then
// becomes the job: every mount the host has made read-only (the job
// writes nowhere but where it is given to: a file left in $HOME, /etc or
// a pack directory would outlive it), a fresh /tmp holding only the operation's sandbox
// ($2, at /tmp/job) and outputs ($3, at /tmp/outputs); the hidden paths
// ($4…) covered; fresh /dev/shm, /var/tmp and /run/lock (nothing shared
// with other jobs), /run covered without network; /proc showing only the
// job's own processes; the limits; and, as uid, without capabilities or a
// way to regain them, the script ($1), by become (becomeUser or
// dropPrivileges). The job is PID 1 of its namespace: when it ends, every
// process it left behind is killed, and it is killed when the server dies
// (PDEATHSIG, set again after the uid changes).
func (s *Sandbox) namespacePrologue(become string) string {
	return `set -e
script=$1 work=$2 outputs=$3; shift 3
exec 3<"$work" 4<"$outputs"
mount --make-rprivate /
while read -r _ _ _ _ mp _; do
  printf -v mp '%b' "$mp"
  mount -o remount,bind,ro "$mp"
done </proc/self/mountinfo
mount -t tmpfs -o size=1m,mode=0755 capstan-job /tmp
mkdir ` + jobHome + ` ` + jobOutputs + `
mount -c --bind /proc/self/fd/3 ` + jobHome + `
mount -c --bind /proc/self/fd/4 ` + jobOutputs + `
mount -c -o remount,bind,rw ` + jobHome + `
mount -c -o remount,bind,rw ` + jobOutputs + `
exec 3<&- 4<&-
for p in "$@"; do
  if [ -d "$p" ]; then mount -t tmpfs -o size=4k,mode=000 capstan-hidden "$p"
  elif [ -e "$p" ]; then mount --bind /dev/null "$p"
  fi
done
for p in /dev/shm /var/tmp /run/lock; do
  if [ -d "$p" ]; then mount -t tmpfs -o size=64m,mode=1777,nosuid,nodev capstan-private "$p"; fi
done
` + s.hideRun() + `mount -t proc -o nosuid,nodev,noexec proc /proc
cd ` + jobHome + `
umask 007
` + s.limitsPrologue() + `
exec ` + become + ` -- bash -c "$script"`
}

// becomeUser is the setpriv that makes a job (as root) uid, without
// capabilities or a way to regain them.
func (s *Sandbox) becomeUser(uid uint32) string {
	return fmt.Sprintf("setpriv --reuid=%d --regid=%d --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all --pdeathsig KILL", uid, s.cfg.GID)
}

// dropPrivileges is the setpriv that leaves a job (in a user namespace,
// where it is uid 0 = the server's uid outside) without capabilities and
// without the root-gets-capabilities rule (securebits noroot, locked), so
// it cannot undo the mounts that hide the data directory.
func (s *Sandbox) dropPrivileges() string {
	return "setpriv --no-new-privs --bounding-set=-all --inh-caps=-all --securebits=+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked,+keep_caps_locked --pdeathsig KILL"
}

// hideRun covers /run (the host's sockets: D-Bus, a container runtime's)
// when the job has no network; with the host's network it stays, as the
// resolver configuration may live there.
func (s *Sandbox) hideRun() string {
	if s.cfg.Network {
		return ""
	}
	return "mount -t tmpfs -o size=1m,mode=0755,nosuid,nodev capstan-run /run\n"
}

// inNamespace rewrites the job's variables that name host paths of its
// sandbox or outputs to where the job sees them.
func inNamespace(own map[string]string, dir, outputs string) map[string]string {
	out := make(map[string]string, len(own))
	for k, v := range own {
		switch {
		case outputs != "" && (v == outputs || strings.HasPrefix(v, outputs+"/")):
			v = jobOutputs + strings.TrimPrefix(v, outputs)
		case dir != "" && (v == dir || strings.HasPrefix(v, dir+"/")):
			v = jobHome + strings.TrimPrefix(v, dir)
		}
		out[k] = v
	}
	return out
}

// diskUsage sums the sizes of files under dirs, giving up (and
// reporting more than limit) after limit bytes or 100,000 entries. A
// directory it cannot read counts as past the limit (hidden is its
// path): a job that makes one unreadable (mode 000 under a server that
// is not root) would otherwise hide whatever it holds from the quota.
func diskUsage(limit int64, dirs ...string) (total int64, hidden string) {
	entries := 0
	for _, d := range dirs {
		if d == "" {
			continue
		}
		_ = filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			if err != nil {
				total, hidden = limit+1, path
				return filepath.SkipAll
			}
			entries++
			if info, err := e.Info(); err == nil && !e.IsDir() {
				total += info.Size()
			}
			if total > limit || entries > 100000 {
				total = limit + 1
				return filepath.SkipAll
			}
			return nil
		})
	}
	return total, hidden
}
