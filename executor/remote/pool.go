// Package remote acts on target hosts over SSH (golang.org/x/crypto/ssh):
// a pool of connections, the ssh runner and the probes of real state
// (tcp, ssh_command, file, service). The engine (package executor)
// resolves targets from the plan's bindings; this package only reaches
// the hosts it is given, through the server's egress allow-list.
package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/capstan-dev/capstan/executor/job"
)

// Config bounds the pool. Zero values take the defaults.
type Config struct {
	// MaxConns bounds the connections open at once, to every host
	// together (default 64): past it, an idle one is closed, or the
	// caller waits.
	MaxConns int
	// DialTimeout bounds the TCP connect and the SSH handshake (default 10 s).
	DialTimeout time.Duration
	// IdleTimeout closes a connection unused for that long (default 60 s).
	IdleTimeout time.Duration
	// KeepAlive is the interval of keepalive requests; a connection that
	// does not answer one within it is closed (default 10 s).
	KeepAlive time.Duration
	// Dial dials a target's address: the egress allow-list's (nil: the
	// pool refuses every dial).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Pool keeps SSH connections per host (address, user, key and pinned
// host keys) and shares each among the jobs and probes using it.
type Pool struct {
	cfg   Config
	mu    sync.Mutex
	conns map[string]*conn
	open  int
	freed chan struct{} // signalled when a place may have become free
	stop  chan struct{}
	wg    sync.WaitGroup
}

type conn struct {
	key string
	// learned is the host key trusted on first use when it was dialled
	// (its target had none pinned and its pack asked for that).
	learned string
	client  *ssh.Client
	users   int
	used    time.Time
	gone    chan struct{}
	once    sync.Once
}

func (c *conn) alive() bool {
	select {
	case <-c.gone:
		return false
	default:
		return true
	}
}

// NewPool makes a pool; Close ends it.
func NewPool(cfg Config) *Pool {
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 64
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 60 * time.Second
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 10 * time.Second
	}
	p := &Pool{cfg: cfg, conns: map[string]*conn{}, freed: make(chan struct{}, 1), stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.reap()
	}()
	return p
}

// Close closes every connection and waits for the pool's goroutines.
func (p *Pool) Close() {
	p.mu.Lock()
	select {
	case <-p.stop:
		p.mu.Unlock()
		return
	default:
	}
	close(p.stop)
	conns := p.conns
	p.conns = map[string]*conn{}
	p.mu.Unlock()
	for _, c := range conns {
		p.drop(c)
	}
	p.wg.Wait()
}

// Open is the number of connections open now.
func (p *Pool) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open
}

// An Error is a failure to reach a target, typed for the retry policy
// (Kind: job.ErrKindHostKey, unreachable, auth, connection_lost).
type Error struct {
	Kind   string
	Target string
	Err    error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %v", e.Target, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Kinds of Error besides job.ErrKindHostKey.
const (
	KindUnreachable    = "unreachable"
	KindAuth           = "auth"
	KindConnectionLost = "connection_lost"
)

// ErrorKind is the kind of a remote error ("" when it is not one).
func ErrorKind(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// get returns a live connection to t, dialling one when there is none.
// The caller releases it.
func (p *Pool) get(ctx context.Context, t *job.Target) (*conn, error) {
	key := connKey(t)
	for {
		p.mu.Lock()
		select {
		case <-p.stop:
			p.mu.Unlock()
			return nil, &Error{Kind: KindUnreachable, Target: t.String(), Err: errors.New("the ssh pool is closed")}
		default:
		}
		if c := p.conns[key]; c != nil && c.alive() {
			c.users++
			p.mu.Unlock()
			if c.learned != "" {
				t.Learned = c.learned
			}
			return c, nil
		}
		if p.open < p.cfg.MaxConns {
			p.open++
			p.mu.Unlock()
			break
		}
		if idle := p.evictIdle(); idle != nil { // its place passes to this dial
			p.mu.Unlock()
			_ = idle.client.Close()
			break
		}
		p.mu.Unlock()
		select { // every connection is in use: wait for one to be released
		case <-p.freed:
		case <-ctx.Done():
			return nil, &Error{Kind: KindUnreachable, Target: t.String(), Err: fmt.Errorf("waiting for a free ssh connection: %w", ctx.Err())}
		}
	}
	client, err := p.dial(ctx, t)
	if err != nil {
		p.mu.Lock()
		p.open--
		p.mu.Unlock()
		p.signalFreed()
		return nil, err
	}
	c := &conn{key: key, learned: t.Learned, client: client, users: 1, used: time.Now(), gone: make(chan struct{})}
	p.mu.Lock()
	if old := p.conns[key]; old != nil && old.alive() { // dialled at the same time: keep the first
		old.users++
		p.mu.Unlock()
		p.drop(c)
		return old, nil
	}
	p.conns[key] = c
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.keepAlive(c)
	}()
	return c, nil
}

// release gives a connection back; a broken one is dropped.
func (p *Pool) release(c *conn) {
	p.mu.Lock()
	c.users--
	c.used = time.Now()
	p.mu.Unlock()
	p.signalFreed()
}

func (p *Pool) signalFreed() {
	select {
	case p.freed <- struct{}{}:
	default:
	}
}

// drop closes a connection once and frees its place.
func (p *Pool) drop(c *conn) {
	c.once.Do(func() {
		close(c.gone)
		_ = c.client.Close()
		p.mu.Lock()
		if p.conns[c.key] == c {
			delete(p.conns, c.key)
		}
		p.open--
		p.mu.Unlock()
		p.signalFreed()
	})
}

// evictIdle takes out the connection unused the longest, if one is
// unused (p.mu held): its place passes to the caller, who closes it.
func (p *Pool) evictIdle() *conn {
	var idle *conn
	for _, c := range p.conns {
		if c.users == 0 && (idle == nil || c.used.Before(idle.used)) {
			idle = c
		}
	}
	if idle == nil {
		return nil
	}
	delete(p.conns, idle.key)
	idle.once.Do(func() { close(idle.gone) }) // its keepAlive ends without freeing the place again
	return idle
}

// keepAlive sends keepalive requests until the connection closes; one
// unanswered within the interval closes it (a host that hangs).
func (p *Pool) keepAlive(c *conn) {
	tick := time.NewTicker(p.cfg.KeepAlive)
	defer tick.Stop()
	closed := make(chan struct{})
	go func() { // ends when the client closes, which drop and Close do
		_ = c.client.Wait()
		close(closed)
	}()
	var requests sync.WaitGroup // a request unanswered ends when drop closes the client
	defer func() { p.drop(c); _ = c.client.Close(); <-closed; requests.Wait() }()
	for {
		select {
		case <-closed:
			return
		case <-c.gone:
			return
		case <-p.stop:
			return
		case <-tick.C:
			answered := make(chan error, 1)
			requests.Add(1)
			go func() {
				defer requests.Done()
				_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
				answered <- err
			}()
			select {
			case err := <-answered:
				if err != nil {
					return
				}
			case <-time.After(p.cfg.KeepAlive):
				return // drop closes the client, which ends SendRequest
			case <-closed:
				return
			}
		}
	}
}

// reap closes connections idle past IdleTimeout.
func (p *Pool) reap() {
	tick := time.NewTicker(p.cfg.IdleTimeout / 4)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		var idle []*conn
		p.mu.Lock()
		for _, c := range p.conns {
			if c.users == 0 && time.Since(c.used) > p.cfg.IdleTimeout {
				idle = append(idle, c)
			}
		}
		p.mu.Unlock()
		for _, c := range idle {
			p.drop(c)
		}
	}
}

// dial connects and authenticates to t, pinning its host key.
func (p *Pool) dial(ctx context.Context, t *job.Target) (*ssh.Client, error) {
	fail := func(kind string, err error) (*ssh.Client, error) {
		return nil, &Error{Kind: kind, Target: t.String(), Err: err}
	}
	if p.cfg.Dial == nil {
		return fail(KindUnreachable, errors.New("no dialer: the server's egress allow-list is not set"))
	}
	auth, err := authMethod(t)
	if err != nil {
		return fail(KindAuth, err)
	}
	hostKey, algorithms, err := pinned(t)
	if err != nil {
		return fail(job.ErrKindHostKey, err)
	}
	addr := net.JoinHostPort(t.Address, strconv.Itoa(t.Port))
	dctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	nc, err := p.cfg.Dial(dctx, "tcp", addr)
	if err != nil {
		return fail(KindUnreachable, err)
	}
	_ = nc.SetDeadline(time.Now().Add(p.cfg.DialTimeout)) // the handshake too
	cfg := &ssh.ClientConfig{User: t.User, Auth: []ssh.AuthMethod{auth}, HostKeyCallback: hostKey,
		HostKeyAlgorithms: algorithms, Timeout: p.cfg.DialTimeout}
	sc, chans, reqs, err := ssh.NewClientConn(nc, addr, cfg)
	if err != nil {
		nc.Close()
		var hk *hostKeyError
		switch {
		case errors.As(err, &hk):
			return fail(job.ErrKindHostKey, hk)
		case strings.Contains(err.Error(), "unable to authenticate"):
			return fail(KindAuth, err)
		default:
			return fail(KindUnreachable, err)
		}
	}
	_ = nc.SetDeadline(time.Time{})
	return ssh.NewClient(sc, chans, reqs), nil
}

// authMethod is the target's key, with its certificate when it has one.
func authMethod(t *job.Target) (ssh.AuthMethod, error) {
	signer, err := ssh.ParsePrivateKey(t.Key)
	if err != nil {
		return nil, fmt.Errorf("the ssh key is not a private key ssh reads (%v)", shortErr(err))
	}
	if len(bytes.TrimSpace(t.Certificate)) > 0 {
		pub, _, _, _, err := ssh.ParseAuthorizedKey(t.Certificate)
		if err != nil {
			return nil, fmt.Errorf("the ssh certificate cannot be read: %v", shortErr(err))
		}
		cert, ok := pub.(*ssh.Certificate)
		if !ok {
			return nil, errors.New("the ssh certificate is a plain key, not a certificate")
		}
		if signer, err = ssh.NewCertSigner(cert, signer); err != nil {
			return nil, fmt.Errorf("the ssh certificate does not match the key: %v", shortErr(err))
		}
	}
	return ssh.PublicKeys(signer), nil
}

// hostKeyError says a host presented a key that is not pinned.
type hostKeyError struct {
	unknown     bool
	fingerprint string
}

func (e *hostKeyError) Error() string {
	if e.unknown {
		return "host key " + e.fingerprint + " cannot be checked: the catalog pins no host_key for this host"
	}
	return "host key " + e.fingerprint + " is not the one pinned in the catalog: the host changed, or someone is in between"
}

// pinned is the callback accepting only the target's pinned host keys,
// and the algorithms to ask the host for (those of the pinned keys, so
// that a host with several keys presents one that is pinned).
func pinned(t *job.Target) (ssh.HostKeyCallback, []string, error) {
	var keys []ssh.PublicKey
	var algorithms []string
	for _, line := range t.HostKeys {
		k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			return nil, nil, fmt.Errorf("pinned host key %q cannot be read: %v", truncate(line, 40), shortErr(err))
		}
		keys = append(keys, k)
		algorithms = append(algorithms, algorithmsFor(k.Type())...)
	}
	return func(_ string, _ net.Addr, key ssh.PublicKey) error {
		for _, k := range keys {
			if bytes.Equal(k.Marshal(), key.Marshal()) {
				return nil
			}
		}
		if len(keys) == 0 && t.TrustOnFirstUse { // the pack asked: trusted now, pinned and audited by the executor
			t.Learned = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
			return nil
		}
		return &hostKeyError{unknown: len(keys) == 0, fingerprint: ssh.FingerprintSHA256(key)}
	}, algorithms, nil
}

func algorithmsFor(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}

// connKey identifies what a connection is to and as whom.
func connKey(t *job.Target) string {
	h := sha256.New()
	h.Write(t.Key)
	h.Write([]byte{0})
	h.Write(t.Certificate)
	for _, k := range t.HostKeys {
		h.Write([]byte{0})
		h.Write([]byte(k))
	}
	if t.TrustOnFirstUse && len(t.HostKeys) == 0 { // never shared with a target that pins nothing and trusts nothing
		h.Write([]byte("\x00tofu"))
	}
	return fmt.Sprintf("%s@%s:%d#%s", t.User, t.Address, t.Port, hex.EncodeToString(h.Sum(nil))[:16])
}

func shortErr(err error) string { return truncate(err.Error(), 120) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
