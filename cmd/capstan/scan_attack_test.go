package main_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cpuTime is the CPU time a process has used (user and system).
func cpuTime(t testing.TB, pid int) time.Duration {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	require.NoError(t, err1)
	require.NoError(t, err2)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// TestAttackPerItemScans: a viewer asks, for 500 resources, which plans
// bind each, in an organization of 470 plans. Each item's answer is an
// index seek (not a scan of every plan), so the request costs the server
// a fraction of a second of CPU, not 22 s — on both stores.
func TestAttackPerItemScans(t *testing.T) {
	t.Parallel()
	for store, args := range bothStores(t, "--rate-limit", "0", "--cost-rate-limit", "0") {
		t.Run(store, func(t *testing.T) { attackPerItemScans(t, args) })
	}
}

func attackPerItemScans(t *testing.T, args []string) {
	p := startGuarded(t, args...)
	in := postAs(t, p, attackAdmin, createIntent, map[string]any{"n": "scanned"})
	require.Empty(t, in.Errors)
	id := in.Data["createIntent"].(map[string]any)["id"]
	const plans = 470
	began := time.Now()
	for range plans {
		r := postAs(t, p, attackAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": id})
		require.Empty(t, r.Errors)
	}
	t.Logf("%d plans in %s", plans, time.Since(began).Round(time.Millisecond))
	before := cpuTime(t, p.cmd.Process.Pid)
	r := postAs(t, p, attackViewer, `{ resources(first: 500) { edges { node { key boundBy(first: 1) { binding { key } } } } } }`, nil)
	used := cpuTime(t, p.cmd.Process.Pid) - before
	require.Empty(t, r.Errors)
	bound := 0
	for _, e := range r.Data["resources"].(map[string]any)["edges"].([]any) {
		if len(e.(map[string]any)["node"].(map[string]any)["boundBy"].([]any)) > 0 {
			bound++
		}
	}
	require.Positive(t, bound, "some resource is bound by the plans")
	t.Logf("boundBy over 500 resources and %d plans: %s of server CPU", plans, used)
	require.Less(t, used, 500*time.Millisecond, "a per-item field scans stored data (980 ms before the index, under 10 ms with it)")
}
