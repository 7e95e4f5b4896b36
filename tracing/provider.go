package tracing

import (
	"context"
	"net/url"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// NewProvider is a tracer provider whose spans go to exporter in batches
// (or synchronously, for tests), with Capstan's ids.
func NewProvider(exporter sdktrace.SpanExporter, batch bool) *sdktrace.TracerProvider {
	opt := sdktrace.WithSyncer(exporter)
	if batch {
		opt = sdktrace.WithBatcher(exporter)
	}
	return sdktrace.NewTracerProvider(opt, sdktrace.WithIDGenerator(IDGenerator{}), sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "capstan"))))
}

// Start exports spans over OTLP/HTTP to endpoint (a URL such as
// http://127.0.0.1:4318) and makes the provider global; the returned
// function flushes and stops it. An empty endpoint leaves tracing off.
func Start(ctx context.Context, endpoint string) (func(), error) {
	if endpoint == "" {
		return func() {}, nil
	}
	// A collector's URL names its host; spans go to OTLP's /v1/traces on
	// it, whatever the exporter's release does with an empty path.
	if u, err := url.Parse(endpoint); err == nil && (u.Path == "" || u.Path == "/") {
		u.Path = "/v1/traces"
		endpoint = u.String()
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, err
	}
	tp := NewProvider(exp, true)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(ctx)
	}, nil
}
