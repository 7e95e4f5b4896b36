// Command upgradefixtures writes the upgrade fixtures of a release with
// that release's own binary (scripts/release-fixtures.sh builds it): an
// embedded data directory and a Neo4j graph, each holding operations in
// flight when the binary was killed with SIGKILL: one waiting at a gate,
// one in the middle of a job, one finished. cmd/capstan's upgrade test
// opens them with the current build, migrates them and finishes them.
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan/internal/graphdump"
	"github.com/capstan-dev/capstan/internal/neo4jtest"
)

const (
	admin = "upgrade-admin-token-0123456789"
	sre   = "upgrade-sre-token-0123456789"
	// SecretKey is the fixtures' secret key (base64): the test suite's.
	secretKey = "Y2Fwc3Rhbi10ZXN0LXNlY3JldC1rZXktMzItYnl0ZXM="
)

// Fixture is what manifest.json says of a fixture.
type Fixture struct {
	Tag        string            `json:"tag"`
	Made       time.Time         `json:"made"`
	Operations map[string]string `json:"operations"` // role (waiting, working, finished) -> operation id
}

func main() {
	bin := flag.String("binary", "", "the release's capstan binary")
	tag := flag.String("tag", "", "the release's tag")
	dir := flag.String("dir", "testdata/upgrade", "the fixtures' directory (pack.yaml and tokens.yaml in it)")
	flag.Parse()
	if *bin == "" || *tag == "" {
		fmt.Fprintln(os.Stderr, "usage: upgradefixtures -binary BIN -tag TAG [-dir testdata/upgrade]")
		os.Exit(2)
	}
	if err := run(context.Background(), *bin, *tag, *dir); err != nil {
		fmt.Fprintf(os.Stderr, "upgradefixtures: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin, tag, dir string) error {
	out := filepath.Join(dir, tag)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	data, err := os.MkdirTemp("", "capstan-fixture-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)
	ops, err := inFlight(ctx, bin, dir, data)
	if err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	if err := tarDir(data, filepath.Join(out, "embedded.tar.gz")); err != nil {
		return err
	}
	if err := writeManifest(filepath.Join(out, "embedded.json"), Fixture{Tag: tag, Made: time.Now().UTC(), Operations: ops}); err != nil {
		return err
	}

	db, err := neo4jtest.StartOwn(ctx)
	if err != nil {
		return fmt.Errorf("neo4j: %w", err)
	}
	defer db.Close()
	data2, err := os.MkdirTemp("", "capstan-fixture-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data2)
	ops, err = inFlight(ctx, bin, dir, data2, "--store", "neo4j", "--neo4j-uri", db.URI)
	if err != nil {
		return fmt.Errorf("neo4j: %w", err)
	}
	driver, err := neo4j.NewDriverWithContext(db.URI, db.Auth())
	if err != nil {
		return err
	}
	defer driver.Close(ctx)
	var graph bytes.Buffer
	zw := gzip.NewWriter(&graph)
	if err := graphdump.Export(ctx, driver, "", zw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "neo4j.jsonl.gz"), graph.Bytes(), 0o644); err != nil {
		return err
	}
	return writeManifest(filepath.Join(out, "neo4j.json"), Fixture{Tag: tag, Made: time.Now().UTC(), Operations: ops})
}

// inFlight runs the release's server on data (and the store extra
// names), starts three operations, and kills it with SIGKILL once one
// waits at its gate, one is in the middle of its job and one finished.
func inFlight(ctx context.Context, bin, dir, data string, extra ...string) (map[string]string, error) {
	key := filepath.Join(data, "secrets", "secret.key")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(key, []byte(secretKey), 0o600); err != nil {
		return nil, err
	}
	packs, err := os.MkdirTemp("", "capstan-fixture-packs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(packs)
	pack, err := os.ReadFile(filepath.Join(dir, "pack.yaml"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(packs, "pack.yaml"), pack, 0o644); err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", data, "--packs", packs,
		"--tokens", filepath.Join(dir, "tokens.yaml"), "--secret-key-file", key, "--rate-limit", "0", "--cost-rate-limit", "0"}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer cmd.Process.Kill()
	url, err := listening(stderr)
	if err != nil {
		return nil, err
	}
	c := client{url: url}
	if err := c.waitReady(90 * time.Second); err != nil {
		return nil, err
	}
	if _, err := c.gql(admin, `mutation { putSecret(input: {name: "registry-token", value: "a-registry-token-of-the-fixture"}) { name } }`); err != nil {
		return nil, err
	}
	ops := map[string]string{}
	for _, role := range []string{"finished", "waiting"} {
		if ops[role], err = c.start(role); err != nil {
			return nil, err
		}
	}
	if err := c.until(ops["finished"], "waiting"); err != nil {
		return nil, err
	}
	if _, err := c.gql(sre, fmt.Sprintf(`mutation { decideGate(input: {operation: %q, node: "approve", approve: true}) { status } }`, ops["finished"])); err != nil {
		return nil, err
	}
	if err := c.until(ops["finished"], "succeeded"); err != nil {
		return nil, err
	}
	if err := c.until(ops["waiting"], "waiting"); err != nil {
		return nil, err
	}
	if ops["working"], err = c.start("working"); err != nil {
		return nil, err
	}
	if err := c.until(ops["working"], "running"); err != nil {
		return nil, err
	}
	time.Sleep(1500 * time.Millisecond) // in the middle of its three seconds
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return nil, err
	}
	_ = cmd.Wait()
	return ops, nil
}

var addr = regexp.MustCompile(`"addr":"(http://[^"]+)"`)

func listening(stderr io.Reader) (string, error) {
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := addr.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return m[1], nil
		}
	}
	return "", errors.New("the server exited before listening")
}

type client struct{ url string }

func (c client) gql(token, query string) (map[string]any, error) {
	body, _ := json.Marshal(map[string]any{"query": query})
	req, err := http.NewRequest(http.MethodPost, c.url+"/graphql", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Data   map[string]any `json:"data"`
		Errors []any          `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("%s: %v", query, out.Errors)
	}
	return out.Data, nil
}

func (c client) waitReady(within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(c.url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("the server did not become ready")
}

// start starts an operation of the fixture's pack.
func (c client) start(name string) (string, error) {
	in, err := c.gql(admin, fmt.Sprintf(`mutation { createIntent(input: {action: "install", targetResourceType: "upgrade.thing", desiredResult: {name: %q}, constraints: {environment: "staging"}}) { id } }`, name))
	if err != nil {
		return "", err
	}
	plan, err := c.gql(admin, fmt.Sprintf(`mutation { planIntent(input: {intent: %q}) { id status } }`, in["createIntent"].(map[string]any)["id"]))
	if err != nil {
		return "", err
	}
	op, err := c.gql(admin, fmt.Sprintf(`mutation { startOperation(input: {plan: %q}) { id } }`, plan["planIntent"].(map[string]any)["id"]))
	if err != nil {
		return "", err
	}
	return op["startOperation"].(map[string]any)["id"].(string), nil
}

// until waits for an operation's status (lower case, as the API's enum
// reads in the old release's answers too).
func (c client) until(op, status string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		got, err := c.gql(admin, fmt.Sprintf(`{ operation(id: %q) { status } }`, op))
		if err != nil {
			return err
		}
		if s, _ := got["operation"].(map[string]any)["status"].(string); s == upper(status) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("operation %s did not reach %s", op, status)
}

func upper(s string) string { return string(bytes.ToUpper([]byte(s))) }

func writeManifest(path string, f Fixture) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// tarDir writes dir as a gzipped tar (regular files and directories).
func tarDir(dir, to string) error {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "." {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() && !info.IsDir() {
			return nil
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(to, buf.Bytes(), 0o644)
}
