// Package s3test starts a real S3 server for tests: versitygw (Apache
// 2.0) on 127.0.0.1 with its posix backend in a temporary directory. Its
// binary is built once from the Go module proxy into bin/ (make
// s3-server, or the first test that needs it), at the pinned version.
package s3test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/internal/reporoot"
)

// Version is the versitygw release the tests run.
const Version = "v1.8.0"

// Credentials of every test server.
const (
	AccessKey = "capstan-test"
	SecretKey = "capstan-test-secret-key"
)

// Server is one running versitygw.
type Server struct {
	// Endpoint is its URL (http://127.0.0.1:<port>).
	Endpoint string
	// Root is its posix backend's directory: bucket b's object k is
	// the file Root/b/k.
	Root string
}

// Binary returns versitygw's path, building it when missing.
func Binary() (string, error) {
	root, err := reporoot.Dir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "bin", "versitygw-"+Version)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(bin+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil { // one build at a time, across test processes
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	gobin, err := os.MkdirTemp(filepath.Dir(bin), ".versitygw-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(gobin)
	cmd := exec.Command("go", "install", "github.com/versity/versitygw/cmd/versitygw@"+Version)
	cmd.Env = append(os.Environ(), "GOBIN="+gobin, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("s3test: building versitygw %s: %v\n%s", Version, err, out)
	}
	return bin, os.Rename(filepath.Join(gobin, "versitygw"), bin)
}

// Start starts a server for the test; it stops when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatalf("the S3 server is part of the test suite: %v", err)
	}
	root, meta := t.TempDir(), t.TempDir()
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--access", AccessKey, "--secret", SecretKey, "--port", fmt.Sprintf("127.0.0.1:%d", port),
		"--quiet", "posix", "--sidecar", meta, root)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	logs, err := os.Create(filepath.Join(meta, "..", filepath.Base(meta)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		logs.Close()
	})
	s := &Server{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), Root: root}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-done:
			out, _ := os.ReadFile(logs.Name())
			t.Fatalf("versitygw ended before it answered:\n%s", out)
		default:
		}
		if answers(s.Endpoint) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not answer at %s within 30s", s.Endpoint)
		}
		time.Sleep(20 * time.Millisecond) // polling a process that gives no sign when it listens
	}
}

// answers reports whether the server answers HTTP (any status).
func answers(endpoint string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(endpoint + "/")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
