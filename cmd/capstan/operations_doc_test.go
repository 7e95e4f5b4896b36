package main_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/embedded"
)

// TestOperationsListsEveryFlagAndMetric keeps docs/OPERATIONS.md whole:
// every flag `capstan serve -h` prints and every capstan_ metric a
// running server exposes has its line there.
func TestOperationsListsEveryFlagAndMetric(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../docs/OPERATIONS.md")
	require.NoError(t, err)
	doc := string(data)
	help, _ := exec.Command(binary, "serve", "-h").CombinedOutput()
	flags := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(string(help), -1)
	require.Greater(t, len(flags), 30, "%s", help)
	for _, f := range flags {
		require.Contains(t, doc, "`--"+f[1]+"`", "docs/OPERATIONS.md does not list --%s", f[1])
	}
	for _, c := range []string{"backup", "restore"} {
		help, _ := exec.Command(binary, c, "-h").CombinedOutput()
		for _, f := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(string(help), -1) {
			require.Contains(t, doc, "`--"+f[1]+"`", "docs/OPERATIONS.md does not list capstan %s --%s", c, f[1])
		}
	}
	for _, m := range append(embedded.Migrations(), cypher.Migrations()...) {
		require.Contains(t, doc, fmt.Sprintf("| %d | `%s` |", m.Level, m.Name), "docs/OPERATIONS.md does not list migration %d %s", m.Level, m.Name)
	}
	p := start(t, t.TempDir())
	defer p.kill()
	resp, err := http.Get(p.url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body strings.Builder
	_, err = io.Copy(&body, resp.Body)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(capstan_[a-z_]+)`).FindAllStringSubmatch(body.String(), -1) {
		names[m[1]] = true
	}
	require.NotEmpty(t, names)
	for name := range names {
		require.Contains(t, doc, "`"+name, "docs/OPERATIONS.md does not list the metric %s", name)
	}
}
