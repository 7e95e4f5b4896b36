// Package metrics reads a Capstan server's own gauges from its /metrics
// page (Prometheus text format): what the load generator and the soak
// test measure the server by.
package metrics

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Scrape returns the value of every sample without labels on the
// server's /metrics page, by metric name (go_goroutines,
// go_memstats_heap_inuse_bytes, process_open_fds, …).
func Scrape(server string) (map[string]float64, error) {
	resp, err := http.Get(strings.TrimSuffix(server, "/") + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s/metrics: %s", server, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}
