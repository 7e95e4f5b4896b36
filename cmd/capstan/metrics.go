package main

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/shard"
	"github.com/capstan-dev/capstan/live"
)

// shardCollector shows which shards of the database's operations this
// replica runs: capstan_executor_shard_owned{shard} is 1 for each of its
// shards and 0 for the others.
type shardCollector struct {
	ex   *executor.Executor
	desc *prometheus.Desc
}

func newShardCollector(ex *executor.Executor) *shardCollector {
	return &shardCollector{ex: ex, desc: prometheus.NewDesc("capstan_executor_shard_owned",
		"Whether this replica runs the shard's operations now (1) or not (0).", []string{"shard"}, nil)}
}

func (c *shardCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *shardCollector) Collect(ch chan<- prometheus.Metric) {
	owned := c.ex.Owned()
	for i := range shard.Shards {
		v := 0.0
		if slices.Contains(owned, i) {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, shard.ShardKey(i))
	}
}

// tailerMetrics counts the timeline tailer's reads and the events it
// brought from other replicas.
func tailerMetrics(t *live.Tailer) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "capstan_tailer_reads_total", Help: "Reads of the timeline tailer (one per interval for the whole process)."},
			func() float64 { return float64(t.Reads.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "capstan_tailer_events_total", Help: "Events other replicas committed that the tailer published to subscribers here."},
			func() float64 { return float64(t.Delivered.Load()) }),
	}
}
