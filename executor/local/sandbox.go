package local

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
	// file, the secret store). Most are outside the job's root anyway; one
	// inside /usr or /etc is left out of it: its directory is grafted into
	// the root entry by entry, without it, so neither a symlink to it nor
	// a file renamed over it on the host brings it back.
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
	// nested: as root, each job is in a user namespace of its own
	// (identity-mapped), whose limits forbid it another; without it (a
	// kernel or container that refuses one), a job may make user
	// namespaces of its own.
	nested bool
	uids   chan uint32
	// probeErrs say why a probe of what this host allows failed (Describe).
	probeErrs []string
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
	cfg.Hide = hidePaths(cfg.Hide)
	s := &Sandbox{cfg: cfg, root: os.Geteuid() == 0, uids: make(chan uint32, cfg.Slots)}
	for i := range cfg.Slots {
		s.uids <- cfg.UIDBase + uint32(i)
	}
	switch {
	case cfg.Off:
	case s.root:
		s.nested = s.namespacesWork(true)
		s.namespaces = s.nested || s.namespacesWork(false)
	default:
		s.userns = s.namespacesWork(true)
	}
	return s
}

// hidePaths are the paths to hide, absolute, each also as what its
// symlinks resolve to: a link in /etc to a file in /etc hides both, so
// neither name reaches the file.
func hidePaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		out = append(out, filepath.Clean(abs))
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			out = append(out, real)
		}
	}
	return out
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
		return fmt.Sprintf("not root: a user namespace per job (the server's uid, without capabilities) that forbids it another, mount/pid/ipc/uts namespaces and a root of its own, %s, limits %+v", net, s.cfg.Limits)
	case s.namespaces:
		net := "no network"
		if s.cfg.Network {
			net = "the host's network"
		}
		users := "a user namespace per job that forbids it another"
		if !s.nested {
			users = "NO user namespace of its own (this host refuses one: " + strings.Join(s.probeErrs, "; ") + "): a job may make user namespaces"
		}
		return fmt.Sprintf("uids %d-%d, %s, mount/pid/ipc/uts namespaces and a root of its own, %s, limits %+v", s.cfg.UIDBase, s.cfg.UIDBase+uint32(s.cfg.Slots)-1, users, net, s.cfg.Limits)
	}
	return fmt.Sprintf("limits %+v; not root, so jobs run as the server's user", s.cfg.Limits)
}

// namespacesWork runs a job's whole prologue the way jobs run, with a
// script that does nothing, to learn whether the kernel (and a container
// around us) allows what it needs — new namespaces, a user namespace of
// their own when user is set, pivot_root, a fresh /proc — and the tools
// exist.
func (s *Sandbox) namespacesWork(user bool) bool {
	for _, tool := range []string{"setpriv", "mount", "pivot_root", "mountpoint"} {
		if !onProloguePath(tool) {
			s.probeErrs = append(s.probeErrs, tool+" is not installed (util-linux)")
			return false
		}
	}
	dir, err := os.MkdirTemp("", "capstan-probe-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	cmd := s.isolated("exit 0", dir, dir, nil, s.cfg.UIDBase, user)
	out, err := cmd.CombinedOutput()
	if err != nil {
		why := strings.TrimSpace(string(out))
		if len(why) > 300 {
			why = why[len(why)-300:]
		}
		s.probeErrs = append(s.probeErrs, fmt.Sprintf("%v: %s", err, why))
	}
	return err == nil
}

// prologuePath is the PATH the prologue runs with (root's tools first,
// whatever the server's own PATH holds).
const prologuePath = "/usr/local/sbin:/usr/sbin:/sbin:" + jobPath

// onProloguePath reports whether tool is on the prologue's PATH.
func onProloguePath(tool string) bool {
	for _, dir := range filepath.SplitList(prologuePath) {
		if info, err := os.Stat(filepath.Join(dir, tool)); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// isolated prepares bash running script in namespaces of its own (see
// namespacePrologue), as uid when the server is root. With user, they sit
// in a user namespace of their own: the server's uid is 0 in it when the
// server is not root (identity-mapped when it is), and the prologue
// forbids it any nested user namespace.
func (s *Sandbox) isolated(script, dir, outputs string, own map[string]string, uid uint32, user bool) *exec.Cmd {
	become, passwd := s.dropPrivileges(), ""
	if s.root {
		become, passwd = s.becomeUser(uid), fmt.Sprint(uid)
	}
	nested := ""
	if user {
		nested = "forbid"
	}
	args := append([]string{"-c", s.namespacePrologue(become), "capstan-job", script, dir, outputs, passwd, fmt.Sprint(s.cfg.GID), nested}, s.cfg.Hide...)
	cmd := exec.Command("bash", args...)
	cmd.Dir = dir
	cmd.Env = jobEnviron(jobHome, inNamespace(own, dir, outputs))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: nsFlags(s.cfg.Network)}
	switch {
	case user && s.root:
		identityNamespace(cmd.SysProcAttr)
	case user:
		userNamespace(cmd.SysProcAttr)
	}
	return cmd
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

// identityNamespace makes the process's namespaces inside a user
// namespace of its own that maps every id to itself (the server is
// root): files keep their owners, the job's uid is the same inside and
// out, and the namespace's own limits can forbid the job nested ones.
func identityNamespace(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
	attr.GidMappingsEnableSetgroups = true
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
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return &sandboxedJob{cmd: cmd, release: func() {}}, nil
	}
	if !s.Isolated() && !s.cfg.AllowUnisolated {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "%s", s.Refusal())
	}
	if !s.Isolated() && (s.cfg.Off || !s.root) {
		cmd := exec.Command("bash", "-c", s.limitsPrologue()+`exec bash -c "$1"`, "capstan-job", script)
		cmd.Dir = dir
		cmd.Env = jobEnviron(dir, own)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		return &sandboxedJob{cmd: cmd, release: func() {}}, nil
	}
	if s.userns {
		return &sandboxedJob{cmd: s.isolated(script, dir, outputs, own, 0, true), release: func() {}}, nil
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
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL,
			Credential: &syscall.Credential{Uid: uid, Gid: s.cfg.GID, Groups: []uint32{}}}
		return &sandboxedJob{cmd: cmd, release: release}, nil
	}
	return &sandboxedJob{cmd: s.isolated(script, dir, outputs, own, uid, s.nested), release: release}, nil
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
		if err := os.Chmod(d, 0o770|os.ModeSetgid); err != nil { // os.FileMode has its own setgid bit: 0o2000 is not it
			return fmt.Errorf("sandbox %s: %w", d, err)
		}
	}
	return nil
}

// Offline is the sandbox with no network whatever --job-network says:
// what a runner uses whose job reaches its target through a relay alone
// (the ansible runner). It shares the uids of s.
func (s *Sandbox) Offline() *Sandbox {
	if s == nil {
		return nil
	}
	c := *s
	c.cfg.Network = false
	return &c
}

// Share gives the jobs' group what the server wrote into a job's
// directory for it (a runner's inventory, key or socket): directories
// 2770, sockets 0660, files 0640, owned by root and the group. Only a
// root server's jobs run as other uids and need it; elsewhere a job runs
// as the server's uid and reads them already.
func (s *Sandbox) Share(paths ...string) error {
	if s == nil || !s.root || s.cfg.Off {
		return nil
	}
	for _, p := range paths {
		info, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("sandbox share %s: %w", p, err)
		}
		mode := os.FileMode(0o640)
		switch {
		case info.IsDir():
			mode = 0o770 | os.ModeSetgid
		case info.Mode()&os.ModeSocket != 0:
			mode = 0o660
		case !info.Mode().IsRegular():
			return fmt.Errorf("sandbox share %s: not a file, directory or socket", p)
		}
		if err := os.Lchown(p, 0, int(s.cfg.GID)); err != nil {
			return fmt.Errorf("sandbox share %s: %w", p, err)
		}
		if err := os.Chmod(p, mode); err != nil {
			return fmt.Errorf("sandbox share %s: %w", p, err)
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
// becomes the job. It builds the job a root of its own on a tmpfs and
// pivots into it, so nothing of the host is within reach but what is
// named here:
//
//   - /usr, /etc and the /bin, /sbin and /lib links or directories, bound
//     read-only (nosuid, nodev): the programs and their configuration;
//   - a fresh /tmp holding only the operation's sandbox ($2, at /tmp/job)
//     and outputs ($3, at /tmp/outputs), fresh /var/tmp, /run and
//     /dev/shm (nothing shared with other jobs), a /dev of the harmless
//     devices alone, and a /proc showing only the job's own processes.
//
// Everything else — the data directory, the tokens file, other users'
// homes, /opt, /srv, /var, the host's sockets in /run or anywhere, /sys —
// is not in it at all; the hidden paths ($7…) that fall inside /usr or
// /etc are left out of it too: the directories holding them are grafted
// entry by entry (graft) instead of bound whole, and /etc's own
// resolv.conf, hosts and hostname, a container's mounts of their own,
// are bound as they are. As root ($4 the job's uid) the job gets a
// passwd entry of its own (ssh and python ask who they are). In a user
// namespace of its own ($6 = forbid), its limits forbid the job another:
// it cannot unshare one to mount or map ids. Then, as the job's uid
// without capabilities or a way to regain them, the script ($1), by
// become (becomeUser or dropPrivileges). The job is PID 1 of its
// namespace: when it ends, every process it left behind is killed, and it
// is killed when the server dies (PDEATHSIG, set again after the uid
// changes).
func (s *Sandbox) namespacePrologue(become string) string {
	return `set -e
PATH=` + prologuePath + `
script=$1 work=$2 outputs=$3 uid=$4 gid=$5 nested=$6; shift 6
exec 3<"$work" 4<"$outputs"
own=$(readlink /proc/self/ns/user) init=$(readlink /proc/1/ns/user 2>/dev/null || true)
mount --make-rprivate /
r=/tmp
mount -t tmpfs -o size=4m,mode=0755 capstan-root "$r"
hide=("$@")
hidden() { local p; for p in "${hide[@]}"; do [ "$1" = "$p" ] && return 0; done; return 1; }
holds_hidden() { local p; for p in "${hide[@]}"; do case "$p" in "$1"/*) return 0 ;; esac; done; return 1; }
bind_ro() { mount -c --bind "$1" "$2"; mount -c -o remount,bind,ro,nosuid,nodev "$2"; }
graft() {
  local src=$1 dst=$2 e name
  mkdir -p "$dst"
  for e in "$src"/*; do
    name=${e##*/}
    if hidden "$e"; then continue
    elif [ -L "$e" ]; then ln -s "$(readlink "$e")" "$dst/$name"
    elif [ -d "$e" ] && holds_hidden "$e"; then graft "$e" "$dst/$name"
    elif [ -d "$e" ]; then mkdir "$dst/$name"; bind_ro "$e" "$dst/$name"
    elif [ -f "$e" ]; then : >"$dst/$name"; bind_ro "$e" "$dst/$name"
    fi
  done
}
shopt -s dotglob nullglob
for d in usr bin sbin lib lib32 lib64 libx32 etc; do
  if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$r/$d"
  elif [ ! -d "/$d" ]; then continue
  elif hidden "/$d"; then mkdir "$r/$d"
  elif holds_hidden "/$d"; then graft "/$d" "$r/$d"
  else
    mkdir "$r/$d"
    bind_ro "/$d" "$r/$d"
  fi
done
shopt -u dotglob nullglob
for f in resolv.conf hosts hostname; do
  if [ -f "/etc/$f" ] && [ -f "$r/etc/$f" ] && ! hidden "/etc/$f" && mountpoint -q "/etc/$f"; then bind_ro "/etc/$f" "$r/etc/$f"; fi
done
mkdir "$r/tmp" "$r/proc" "$r/dev" "$r/run" "$r/var" "$r/var/tmp"
mount -t tmpfs -o size=1m,mode=0755,nosuid,nodev capstan-job "$r/tmp"
mkdir "$r` + jobHome + `" "$r` + jobOutputs + `"
mount -c --bind /proc/self/fd/3 "$r` + jobHome + `"
mount -c --bind /proc/self/fd/4 "$r` + jobOutputs + `"
exec 3<&- 4<&-
mount -t tmpfs -o size=64m,mode=1777,nosuid,nodev capstan-private "$r/var/tmp"
mount -t tmpfs -o size=1m,mode=0755,nosuid,nodev capstan-run "$r/run"
mkdir -m 1777 "$r/run/lock"
mount -t tmpfs -o size=64k,mode=0755,nosuid,noexec capstan-dev "$r/dev"
for n in null zero full random urandom; do
  : >"$r/dev/$n"
  mount -c --bind "/dev/$n" "$r/dev/$n"
done
ln -s /proc/self/fd "$r/dev/fd"
ln -s /proc/self/fd/0 "$r/dev/stdin"
ln -s /proc/self/fd/1 "$r/dev/stdout"
ln -s /proc/self/fd/2 "$r/dev/stderr"
mkdir "$r/dev/shm"
mount -t tmpfs -o size=64m,mode=1777,nosuid,nodev capstan-shm "$r/dev/shm"
` + s.resolvConf() + `if [ -n "$uid" ] && ! grep -q "^[^:]*:[^:]*:$uid:" /etc/passwd; then
  { cat /etc/passwd; echo "capstan-job:x:$uid:$gid:Capstan job:` + jobHome + `:/usr/sbin/nologin"; } >"$r/.passwd"
  mount -c --bind "$r/.passwd" "$r/etc/passwd"
  mount -c -o remount,bind,ro "$r/etc/passwd"
  rm "$r/.passwd"
fi
mount -t proc -o nosuid,nodev,noexec proc "$r/proc"
if [ "$nested" = forbid ] && [ "$own" != "$init" ]; then
  echo 0 >"$r/proc/sys/user/max_user_namespaces"
fi
cd "$r"
mkdir .old
pivot_root . .old
cd /
umount -l /.old
rmdir /.old
mount -o remount,bind,ro /
cd ` + jobHome + `
umask 007
PATH=` + jobPath + `
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

// resolvConf gives a job with the host's network the host's resolver
// configuration when /etc/resolv.conf points into /run (systemd-resolved,
// resolvconf): that one file, never the rest of /run and its sockets.
func (s *Sandbox) resolvConf() string {
	if !s.cfg.Network {
		return ""
	}
	return `if [ -L /etc/resolv.conf ]; then
  f=$(readlink -f /etc/resolv.conf)
  case "$f" in /run/*) if [ -f "$f" ]; then mkdir -p "$r$(dirname "$f")"; : >"$r$f"; mount -c --bind "$f" "$r$f"; fi ;; esac
fi
`
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
