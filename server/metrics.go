package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/capstan-dev/capstan/live"
)

// metrics serves Prometheus metrics: the Go runtime, the process, and the
// live subscriptions (open, messages published, overflows).
func metrics(b *live.Broker, more ...prometheus.Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(more...)
	if b != nil {
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "capstan_live_subscriptions", Help: "Open live subscriptions."},
				func() float64 { return float64(b.Subscribers()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "capstan_live_published_total", Help: "Committed operation changes published to subscribers."},
				func() float64 { return float64(b.Published.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "capstan_live_overflows_total", Help: "Subscriptions ended because their client fell behind."},
				func() float64 { return float64(b.Overflows.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "capstan_live_encodings_total", Help: "Live events encoded for a subscription's selection (once per selection)."},
				func() float64 { return float64(b.Encodings.Made.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "capstan_live_encodings_reused_total", Help: "Live events sent with an encoding another subscriber with the same selection made."},
				func() float64 { return float64(b.Encodings.Reused.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "capstan_live_encodings_alone_total", Help: "Events a subscription read from the store (catching up past what the broker keeps, or filling a gap) and encoded for itself alone."},
				func() float64 { return float64(b.Encodings.Alone.Load()) }),
		)
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
