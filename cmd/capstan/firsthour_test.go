package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var devTokenLine = regexp.MustCompile(`^  token:      (dev-[0-9a-f]+)$`)

// devServe starts `capstan serve` in dev mode with no CAPSTAN_DEV_TOKEN and
// returns the token it printed on a line of its own, its URL and a stop.
func devServe(t *testing.T, dataDir string) (token, url string, stop func()) {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAPSTAN_DEV_TOKEN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var header string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && (token == "" || url == "") {
		line := sc.Text()
		if m := devTokenLine.FindStringSubmatch(line); m != nil {
			token = m[1]
		}
		if strings.HasPrefix(line, "  header:     ") {
			header = strings.TrimPrefix(line, "  header:     ")
		}
		if m := listening.FindStringSubmatch(line); m != nil {
			url = m[1]
		}
	}
	go func() { // keep draining, so the server never blocks on its stderr
		for sc.Scan() {
		}
	}()
	require.NotEmpty(t, token, "dev mode prints the token on a line of its own")
	var h map[string]string
	require.NoError(t, json.Unmarshal([]byte(header), &h), "a header ready to paste: %q", header)
	require.Equal(t, "Bearer "+token, h["Authorization"])
	return token, url, func() {
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		require.NoError(t, cmd.Wait())
	}
}

// TestFirstHour: the dev token is printed with a header to paste and stays
// the same across restarts of one data directory; `serve --help`,
// `version` and `pack lint packs/` do what a newcomer expects.
func TestFirstHour(t *testing.T) {
	dir := t.TempDir()
	first, url, stop := devServe(t, dir)
	ask := func(url, token string) int {
		req, _ := http.NewRequest(http.MethodPost, url+"/graphql", bytes.NewReader([]byte(`{"query":"{ viewer { organization } }"}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Eventually(t, func() bool { return ask(url, first) == http.StatusOK }, 30*time.Second, 50*time.Millisecond)
	stop()
	info, err := os.Stat(filepath.Join(dir, "dev-token"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "only its owner reads the kept token")

	second, url, stop := devServe(t, dir)
	defer stop()
	require.Equal(t, first, second, "the dev token is stable across restarts of the same data directory")
	require.Eventually(t, func() bool { return ask(url, second) == http.StatusOK }, 30*time.Second, 50*time.Millisecond)

	out, err := exec.Command(binary, "serve", "--help").CombinedOutput()
	require.NoError(t, err, "serve --help exits 0")
	require.Contains(t, string(out), "-listen")
	out, err = exec.Command(binary, "version").CombinedOutput()
	require.NoError(t, err)
	require.Regexp(t, `^capstan \S+ \(go1\.`, string(out))
	lint := exec.Command(binary, "pack", "lint", "packs/")
	lint.Dir = "../.."
	out, err = lint.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "packs/kubernetes: ok: kubernetes@")
	require.Contains(t, string(out), "packs/tempo.yaml: ok: tempo@")
	require.NotContains(t, string(out), "packs/packs/")
}
