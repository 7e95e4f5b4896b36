package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
)

// MaxOutput bounds what is kept of a remote command's output, as
// job.MaxOutput does for local jobs; the rest is read and dropped.
const MaxOutput = job.MaxOutput

// MaxArtifact bounds an artifact copied back from a host.
const MaxArtifact = 1 << 20

// jobRoot is where a remote job runs on its host: .capstan/jobs/<op>
// under the ssh user's home, its outputs in outputs/ below.
const jobRoot = ".capstan/jobs"

// Runner runs a job's script on its target over SSH (runner: ssh).
type Runner struct {
	Pool *Pool
}

// Run runs the job on its target: its variables and script travel on
// the session's standard input (never in a command line a host's ps
// shows), the script runs in a session of its own whose process group
// a cancel or a timeout kills, and the declared artifacts are copied
// back from the remote outputs directory into the job's local one.
func (r Runner) Run(ctx context.Context, j job.Job) job.Result {
	if !j.Target.IsHost() {
		return job.Result{ExitCode: -1, ErrKind: job.ErrKindTarget, Err: fmt.Errorf("job %s: an ssh job needs a target (run.target: a requirement bound to a compute node)", j.NodeID)}
	}
	ctx, cancel := context.WithTimeout(ctx, j.Timeout())
	defer cancel()
	dir := remoteDir(j.OperationID)
	env := map[string]string{}
	for k, v := range j.Env {
		env[k] = v
	}
	env["CAPSTAN_OUTPUTS"] = "$HOME/" + dir + "/outputs"
	res := r.Pool.Exec(ctx, j.Target, Command{Dir: dir, Env: env, Script: j.Spec.Script, Tag: j.NodeID + "-" + fmt.Sprint(j.Attempt), Deadline: j.Deadline})
	out := job.Result{ExitCode: res.ExitCode, Output: res.Output}
	switch {
	case res.Err == nil && res.ExitCode == 0:
	case closed(j.Deadline):
		out.ExitCode, out.ErrKind, out.Err = -1, job.ErrKindLease, fmt.Errorf("job %s: killed on %s by its watchdog: the executor's lease ran out before it was renewed", j.NodeID, j.Target.Resource)
	case res.Err == nil:
		out.ErrKind, out.Err = fmt.Sprintf("exit:%d", res.ExitCode), fmt.Errorf("job %s exited %d on %s", j.NodeID, res.ExitCode, j.Target.Resource)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		out.ExitCode, out.ErrKind, out.Err = -1, "timeout", fmt.Errorf("job %s: timeout on %s", j.NodeID, j.Target.Resource)
	case ctx.Err() != nil:
		out.ExitCode, out.ErrKind, out.Err = -1, "cancelled", fmt.Errorf("job %s: cancelled on %s", j.NodeID, j.Target.Resource)
	default:
		out.ExitCode, out.ErrKind, out.Err = -1, ErrorKind(res.Err), fmt.Errorf("job %s: %w", j.NodeID, res.Err)
	}
	if out.Err == nil {
		if err := r.collect(ctx, j, dir); err != nil {
			out.ExitCode, out.ErrKind, out.Err = -1, ErrorKind(err), fmt.Errorf("job %s: collecting its outputs from %s: %w", j.NodeID, j.Target.Resource, err)
		}
	}
	return out
}

// closed reports whether a job's deadline has passed: a job that ended
// unsuccessfully then was killed by its watchdog (or would have been).
func closed(d job.Deadline) bool {
	if d == nil {
		return false
	}
	left, bounded := d.Remaining()
	return bounded && left <= 0
}

// collect copies each declared artifact the job wrote on its host into
// the local outputs directory: a regular file of at most MaxArtifact
// bytes, as the engine reads local ones.
func (r Runner) collect(ctx context.Context, j job.Job, dir string) error {
	for _, a := range j.Artifacts {
		script := `f="$HOME/$1/outputs/$2"; [ -f "$f" ] && [ ! -L "$f" ] || exit 3; head -c ` + fmt.Sprint(MaxArtifact+1) + ` -- "$f"`
		res := r.Pool.Exec(ctx, j.Target, Command{Script: script, Args: []string{dir, a.Name}, Tag: "collect"})
		if res.Err != nil {
			return res.Err
		}
		if res.ExitCode == 3 {
			continue // not written: the engine records it missing
		}
		if res.ExitCode != 0 || len(res.Output) > MaxArtifact {
			continue // unreadable or too large: missing too
		}
		if err := local.WriteOutput(j.Outputs, a.Name, res.Output); err != nil {
			return err
		}
	}
	return nil
}

// remoteDir is the operation's directory on a host, relative to home.
func remoteDir(opID string) string {
	if opID == "" {
		opID = "none"
	}
	return filepath.Join(jobRoot, filepath.Base(opID))
}

// A Command is a script to run on a host: in Dir (relative to the home
// directory, created when missing), with Env exported and Args as $1….
type Command struct {
	Dir    string
	Env    map[string]string
	Script string
	Args   []string
	// Tag names the command's pidfile (its process group) in the
	// operation's directory.
	Tag string
	// Deadline, when bounded (and the command has a Tag), is watched on
	// the host: a watchdog there kills the process group when it passes
	// unmoved, or when the session's input ends (the server died).
	Deadline job.Deadline
}

// ExecResult is a remote command's outcome: Err when it did not run to
// an exit (a typed *Error, or the context's).
type ExecResult struct {
	ExitCode int
	Output   []byte
	Err      error
}

// program is what the session reads from its standard input: the
// variables, the directory, and the script run by setsid in a process
// group of its own, whose id it leaves in a pidfile for a cancel.
func (c Command) program(pidfile string, watch time.Duration) string {
	var b strings.Builder
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		if validName(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := c.Env[k]
		if rest, ok := strings.CutPrefix(v, "$HOME/"); ok && k == "CAPSTAN_OUTPUTS" {
			fmt.Fprintf(&b, "export %s=\"$HOME\"/%s\n", k, quote(rest))
			continue
		}
		fmt.Fprintf(&b, "export %s=%s\n", k, quote(v))
	}
	if c.Dir != "" {
		fmt.Fprintf(&b, "mkdir -p \"$HOME\"/%s/outputs && cd \"$HOME\"/%s || exit 125\n", quote(c.Dir), quote(c.Dir))
	}
	args := ""
	for _, a := range c.Args {
		args += " " + quote(a)
	}
	if pidfile != "" { // bash -c '…' $0=script $1=pidfile $2…=args
		// The script runs in a session and process group of its own,
		// whose leader records its id (for a cancel to kill the group)
		// and, once the script ended, kills what it left in the group
		// (as a local job's PID namespace does): a background child would
		// otherwise hold the session's output open, and the session would
		// not end. A daemon detaches into a session of its own, its
		// output elsewhere.
		leader := fmt.Sprintf("setsid --wait bash -c %s %s \"$HOME\"/%s%s", quote(groupLeader), quote(c.Script), quote(pidfile), args)
		if watch <= 0 {
			fmt.Fprintf(&b, "exec 3<&-; exec %s\n", leader)
			return b.String()
		}
		// The watchdog reads the deadline's moves on the session's
		// input (fd 3); the job does not see it.
		fmt.Fprintf(&b, "%s 3<&- &\ncapstan_job=$!\n", leader)
		fmt.Fprintf(&b, "{ t=%s kill='p=$(cat \"$HOME\"/'%s' 2>/dev/null); kill -KILL -- \"-${p:-$capstan_job}\" 2>/dev/null'\n%s\n} <&3 >/dev/null 2>&1 &\n",
			local.Seconds(watch), quote(pidfile), local.WatchdogLoop)
		b.WriteString("capstan_watch=$!\nexec 3<&-\nwait \"$capstan_job\"; rc=$?\nkill \"$capstan_watch\" 2>/dev/null\nexit $rc\n")
	} else {
		fmt.Fprintf(&b, "exec 3<&-; exec bash -c %s capstan-job%s\n", quote(c.Script), args)
	}
	return b.String()
}

// groupLeader is the process group's leader: $0 the script, $1 the
// pidfile, the rest the script's arguments.
const groupLeader = `echo $$ > "$1"; shift
bash -c "$0" capstan-job "$@"; rc=$?
for p in $(pgrep -g $$ 2>/dev/null); do [ "$p" = $$ ] || kill -KILL "$p" 2>/dev/null; done
exit $rc`

// Exec runs c on t through the pool. A cancelled ctx kills the remote
// process group and returns the context's error.
func (p *Pool) Exec(ctx context.Context, t *job.Target, c Command) ExecResult {
	conn, err := p.get(ctx, t)
	if err != nil {
		return ExecResult{ExitCode: -1, Err: err}
	}
	defer p.release(conn)
	pidfile := "" // relative to the home directory
	if c.Dir != "" && c.Tag != "" {
		pidfile = c.Dir + "/." + sanitize(c.Tag) + ".pid"
	}
	var watch time.Duration
	if c.Deadline != nil && pidfile != "" {
		if left, bounded := c.Deadline.Remaining(); bounded {
			watch = max(left, time.Millisecond)
		}
	}
	prog := c.program(pidfile, watch)
	s, err := conn.client.NewSession()
	if err != nil {
		p.drop(conn)
		return ExecResult{ExitCode: -1, Err: &Error{Kind: KindConnectionLost, Target: t.String(), Err: err}}
	}
	defer s.Close()
	var out bounded
	s.Stdout, s.Stderr = &out, &out
	s.Stdin = strings.NewReader(prog)
	if watch > 0 { // the deadline's moves follow the program on the input
		beats, feed := io.Pipe()
		s.Stdin = io.MultiReader(strings.NewReader(prog), beats)
		heart := local.FeedDeadline(feed, c.Deadline)
		defer func() { beats.Close(); heart.Stop() }()
	}
	// The session's command is fixed: it reads exactly the program's
	// length from stdin, then runs it with stdin at /dev/null and the
	// rest of the session's input on fd 3 (the watchdog's).
	cmd := fmt.Sprintf(`LC_ALL=C exec bash -c 'IFS= read -r -d "" -N %d capstan_prog; exec 3<&0 </dev/null; unset LC_ALL; eval "$capstan_prog"'`, len(prog))
	if err := s.Start(cmd); err != nil {
		p.drop(conn)
		return ExecResult{ExitCode: -1, Err: &Error{Kind: KindConnectionLost, Target: t.String(), Err: err}}
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		p.kill(conn, pidfile)
		_ = s.Close()
		<-done
		return ExecResult{ExitCode: -1, Output: out.Bytes(), Err: ctx.Err()}
	case <-conn.gone: // keepalive unanswered: the host hangs or went away
		_ = s.Close()
		<-done
		return ExecResult{ExitCode: -1, Output: out.Bytes(), Err: &Error{Kind: KindConnectionLost, Target: t.String(), Err: errors.New("the connection was lost (no keepalive answer)")}}
	}
	var exit *ssh.ExitError
	switch {
	case err == nil:
		return ExecResult{Output: out.Bytes()}
	case errors.As(err, &exit):
		return ExecResult{ExitCode: exit.ExitStatus(), Output: out.Bytes()}
	default: // ExitMissingError, io.EOF: the connection or sshd went away
		p.drop(conn)
		return ExecResult{ExitCode: -1, Output: out.Bytes(), Err: &Error{Kind: KindConnectionLost, Target: t.String(), Err: fmt.Errorf("the command ended without an exit status: %v", err)}}
	}
}

// kill ends a cancelled command's process group through another session
// (best effort, bounded by a few seconds).
func (p *Pool) kill(c *conn, pidfile string) {
	if pidfile == "" || !c.alive() {
		return
	}
	s, err := c.client.NewSession()
	if err != nil {
		return
	}
	defer s.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Run(`pid=$(cat "$HOME"/` + quote(pidfile) + ` 2>/dev/null) && [ -n "$pid" ] && kill -KILL -- "-$pid"`)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.Close()
		<-done
	}
}

// bounded keeps the first MaxOutput bytes written to it and drops the
// rest: a plain io.Writer (no ReadFrom for io.Copy to take instead).
// The session copies stdout and stderr into it at once: it locks.
type bounded struct {
	mu      sync.Mutex
	buf     []byte
	dropped int64
}

func (b *bounded) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := MaxOutput - len(b.buf)
	if room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	if len(p) > room {
		b.dropped += int64(len(p) - max(room, 0))
	}
	return len(p), nil
}

func (b *bounded) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped > 0 {
		return append(b.buf, fmt.Sprintf("\n[capstan: %d more bytes of output dropped]\n", b.dropped)...)
	}
	return b.buf
}

var _ io.Writer = (*bounded)(nil)

// quote makes s one shell word.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// validName reports whether k can be a shell variable's name.
func validName(k string) bool {
	if k == "" {
		return false
	}
	for i, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// sanitize keeps a tag to letters, digits, - and _.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}
