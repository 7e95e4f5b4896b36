package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"

	"k8s.io/klog/v2"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/catalog"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/embedded"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/helm"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/kube"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/executor/postgres"
	"github.com/capstan-dev/capstan/executor/probe"
	"github.com/capstan-dev/capstan/executor/remote"
	"github.com/capstan-dev/capstan/executor/s3"
	"github.com/capstan-dev/capstan/executor/shard"
	"github.com/capstan-dev/capstan/internal/crashpoint"
	"github.com/capstan-dev/capstan/internal/gctune"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/observe"
	"github.com/capstan-dev/capstan/packs"
	"github.com/capstan-dev/capstan/secret"
	"github.com/capstan-dev/capstan/server"
	"github.com/capstan-dev/capstan/service"
	"github.com/capstan-dev/capstan/tracing"
)

// DemoOrg is the organization of dev mode.
const DemoOrg = "demo"

type serveConfig struct {
	listen, store, dataDir, tokens, packsDir, catalog string
	trustedDocuments, trustedMode                     string
	neo4jURI, neo4jUser, neo4jPassword, neo4jDatabase string
	allowedOrigins                                    []string
	workers                                           int
	executorLease                                     time.Duration
	// assessEvery overrides every resource type's assessment interval
	// (0: the types'; negative: no scheduled assessments).
	assessEvery       time.Duration
	assessConcurrency int
	// introspection: "auto" (on in dev mode only), "on" or "off".
	introspection string
	graphiql      bool
	console       bool
	// metricsListen: "" (on the main listener), "off", or an address.
	metricsListen string
	rate          server.RateLimit
	// readHeaderTimeout and idleTimeout bound a connection's headers and
	// its idle keep-alive time.
	readHeaderTimeout, idleTimeout time.Duration
	// conns bounds the open connections, in total and per client address.
	conns server.ConnLimits
	// sandbox: "on" (confine jobs; the default) or "off".
	sandbox    string
	jobUIDBase int
	jobNetwork bool
	// jobDiskMiB bounds what an operation's sandbox and outputs hold.
	jobDiskMiB int
	// production lists the environments declared production.
	production string
	// allowUnisolated runs shell jobs and command probes even where they
	// cannot be isolated.
	allowUnisolated bool
	analyzer        analyzerConfig
	// otlpEndpoint receives traces (OTLP/HTTP); empty: tracing is off.
	otlpEndpoint string
	// trustTraceparent continues a client's trace (its traceparent
	// header); by default a request's span starts a trace of its own.
	trustTraceparent bool
	// keepSandboxes keeps finished operations' sandbox directories.
	keepSandboxes bool
	// jobDir holds the operations' working directories, apart from the
	// data directory (empty: executor.DefaultJobDir).
	jobDir string
	egress []string
	// secretStore and secretKeyFile: the embedded secret store's file
	// and its key's (the key may come from CAPSTAN_SECRET_KEY instead).
	secretStore, secretKeyFile string
	artifacts                  artifactFlags
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

func envFloat(name string, def float64) float64 {
	if f, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return f
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

// addStoreFlags adds the flags that name the store and its secrets:
// capstan serve's, and capstan restore's.
func addStoreFlags(fs *flag.FlagSet, c *serveConfig) {
	fs.StringVar(&c.store, "store", envOr("CAPSTAN_STORE", "embedded"), "store: embedded or neo4j (CAPSTAN_STORE)")
	fs.StringVar(&c.dataDir, "data-dir", envOr("CAPSTAN_DATA_DIR", "data"), "embedded store directory (CAPSTAN_DATA_DIR)")
	fs.StringVar(&c.neo4jURI, "neo4j-uri", envOr("CAPSTAN_NEO4J_URI", "bolt://127.0.0.1:7687"), "Neo4j Bolt URI for --store neo4j (CAPSTAN_NEO4J_URI)")
	fs.StringVar(&c.neo4jUser, "neo4j-user", envOr("CAPSTAN_NEO4J_USER", ""), "Neo4j user; empty for no auth (CAPSTAN_NEO4J_USER)")
	fs.StringVar(&c.neo4jDatabase, "neo4j-database", envOr("CAPSTAN_NEO4J_DATABASE", ""), "Neo4j database; empty for the default (CAPSTAN_NEO4J_DATABASE)")
	fs.StringVar(&c.secretStore, "secret-store", envOr("CAPSTAN_SECRET_STORE", ""), "the secret store's file, encrypted with AES-256-GCM (default <data-dir>/secrets/secrets.json) (CAPSTAN_SECRET_STORE)")
	fs.StringVar(&c.secretKeyFile, "secret-key-file", envOr("CAPSTAN_SECRET_KEY_FILE", ""), "the secret store's key file, made (0600) when missing, unless CAPSTAN_SECRET_KEY holds the key in base64 (default <data-dir>/secrets/secret.key) (CAPSTAN_SECRET_KEY_FILE)")
	c.neo4jPassword = os.Getenv("CAPSTAN_NEO4J_PASSWORD")
}

// storeDefaults fills what the store flags leave to the data directory.
func storeDefaults(c *serveConfig) {
	if c.secretStore == "" {
		c.secretStore = filepath.Join(c.dataDir, "secrets", "secrets.json")
	}
	if c.secretKeyFile == "" {
		c.secretKeyFile = filepath.Join(c.dataDir, "secrets", "secret.key")
	}
}

func parseServe(args []string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.listen, "listen", envOr("CAPSTAN_LISTEN", "127.0.0.1:8080"), "address to listen on (CAPSTAN_LISTEN)")
	addStoreFlags(fs, &c)
	fs.StringVar(&c.tokens, "tokens", envOr("CAPSTAN_TOKENS", ""), "tokens file; without it, dev mode with one admin of the demo organization (CAPSTAN_TOKENS)")
	fs.StringVar(&c.packsDir, "packs", envOr("CAPSTAN_PACKS", ""), "directory of extra scenario packs to install at start (CAPSTAN_PACKS)")
	fs.StringVar(&c.trustedDocuments, "trusted-documents", envOr("CAPSTAN_TRUSTED_DOCUMENTS", ""), "an Apollo persisted query manifest of the documents clients may send (the console's ships in the binary: console, for it); empty: none (CAPSTAN_TRUSTED_DOCUMENTS)")
	fs.StringVar(&c.trustedMode, "trusted-documents-mode", envOr("CAPSTAN_TRUSTED_DOCUMENTS_MODE", server.TrustedLog), "what a document the list does not hold gets: off (runs), log (runs, counted and logged) or enforce (refused, FORBIDDEN, but for admins) (CAPSTAN_TRUSTED_DOCUMENTS_MODE)")
	fs.StringVar(&c.catalog, "catalog", envOr("CAPSTAN_CATALOG", ""), "catalog file to import at start; without it an empty store gets the demo catalog (CAPSTAN_CATALOG)")
	origins := fs.String("allowed-origins", envOr("CAPSTAN_ALLOWED_ORIGINS", ""), "comma-separated host patterns browsers may open WebSockets from, besides this server's host (CAPSTAN_ALLOWED_ORIGINS)")
	fs.IntVar(&c.workers, "workers", envInt("CAPSTAN_WORKERS", 8), "jobs and probes run at once across operations (CAPSTAN_WORKERS)")
	fs.DurationVar(&c.assessEvery, "assess-every", envDuration("CAPSTAN_ASSESS_EVERY", 0),
		"assess every observed resource this often, whatever its type declares (0: each type's observe.every; -1s: no scheduled assessments) (CAPSTAN_ASSESS_EVERY)")
	fs.IntVar(&c.assessConcurrency, "assess-concurrency", envInt("CAPSTAN_ASSESS_CONCURRENCY", 8), "health assessments run at once by the schedule (CAPSTAN_ASSESS_CONCURRENCY)")
	fs.DurationVar(&c.executorLease, "executor-lease", envDuration("CAPSTAN_EXECUTOR_LEASE", shard.DefaultLeaseTerm),
		"with --store neo4j: the term of the lease that keeps a second Capstan process from running the database's operations; it is renewed every third of it (CAPSTAN_EXECUTOR_LEASE)")
	fs.StringVar(&c.introspection, "introspection", envOr("CAPSTAN_INTROSPECTION", "auto"), "schema introspection and field suggestions: auto (dev mode only), on or off (CAPSTAN_INTROSPECTION)")
	fs.BoolVar(&c.graphiql, "graphiql", envOr("CAPSTAN_GRAPHIQL", "true") == "true", "serve GraphiQL at /graphiql (CAPSTAN_GRAPHIQL)")
	fs.BoolVar(&c.console, "console", envOr("CAPSTAN_CONSOLE", "true") == "true", "serve the console at / (CAPSTAN_CONSOLE)")
	fs.StringVar(&c.metricsListen, "metrics-listen", envOr("CAPSTAN_METRICS_LISTEN", ""), "where /metrics is served: empty for the main listener, off, or an address of its own (CAPSTAN_METRICS_LISTEN)")
	fs.Float64Var(&c.rate.Requests, "rate-limit", envFloat("CAPSTAN_RATE_LIMIT", server.DefaultRateLimit.Requests), "GraphQL requests per second per token, bursts of twice that; 0 for no limit (CAPSTAN_RATE_LIMIT)")
	fs.IntVar(&c.rate.Subscriptions, "subscription-limit", envInt("CAPSTAN_SUBSCRIPTION_LIMIT", server.DefaultRateLimit.Subscriptions), "subscriptions one token holds open at once, over every connection; 0 for no limit (CAPSTAN_SUBSCRIPTION_LIMIT)")
	fs.Float64Var(&c.rate.Cost, "cost-rate-limit", envFloat("CAPSTAN_COST_RATE_LIMIT", server.DefaultRateLimit.Cost), "summed operation cost per second per token, bursts of twice that; 0 for no limit (CAPSTAN_COST_RATE_LIMIT)")
	fs.DurationVar(&c.readHeaderTimeout, "read-header-timeout", envDuration("CAPSTAN_READ_HEADER_TIMEOUT", 10*time.Second), "time a connection has to send a request's headers (CAPSTAN_READ_HEADER_TIMEOUT)")
	fs.DurationVar(&c.idleTimeout, "idle-timeout", envDuration("CAPSTAN_IDLE_TIMEOUT", 60*time.Second), "time an idle keep-alive connection stays open (CAPSTAN_IDLE_TIMEOUT)")
	fs.StringVar(&c.production, "production-environments", envOr("CAPSTAN_PRODUCTION_ENVIRONMENTS", "prod,production"), "comma-separated environments that are production: every stricter rule (second approvers, who reveals secrets, inline code, required constraints, the packs' intent.production policies) asks this list, compared without case (CAPSTAN_PRODUCTION_ENVIRONMENTS)")
	conns := server.DefaultConnLimits()
	fs.IntVar(&c.conns.Total, "max-connections", envInt("CAPSTAN_MAX_CONNECTIONS", conns.Total), "connections open at once; past it a new one gets a 503 and is closed (default: the file descriptor limit less a quarter, at least 1,024, kept for the store and jobs); 0 for no limit (CAPSTAN_MAX_CONNECTIONS)")
	fs.IntVar(&c.conns.PerClient, "max-connections-per-client", envInt("CAPSTAN_MAX_CONNECTIONS_PER_CLIENT", conns.PerClient), "connections one client address holds open at once; 0 for no limit (CAPSTAN_MAX_CONNECTIONS_PER_CLIENT)")
	fs.StringVar(&c.sandbox, "sandbox", envOr("CAPSTAN_SANDBOX", "on"), "confine shell jobs and command probes (other uids, limits, namespaces; docs/SANDBOX.md): on or off (CAPSTAN_SANDBOX)")
	fs.IntVar(&c.jobDiskMiB, "job-disk-quota-mib", envInt("CAPSTAN_JOB_DISK_QUOTA_MIB", 1024), "MiB an operation's sandbox and outputs may hold; a job past it is killed (CAPSTAN_JOB_DISK_QUOTA_MIB)")
	fs.IntVar(&c.jobUIDBase, "job-uid-base", envInt("CAPSTAN_JOB_UID_BASE", 100000), "first of the uids jobs run as when the server runs as root (CAPSTAN_JOB_UID_BASE)")
	fs.BoolVar(&c.jobNetwork, "job-network", envOr("CAPSTAN_JOB_NETWORK", "false") == "true", "give jobs the host's network (off: none at all) (CAPSTAN_JOB_NETWORK)")
	fs.BoolVar(&c.allowUnisolated, "allow-unisolated-jobs", envOr("CAPSTAN_ALLOW_UNISOLATED_JOBS", "false") == "true", "run shell jobs and command probes even where they cannot be isolated (--sandbox off, or neither root nor user namespaces): they then read what the server's user reads; without it they are refused (CAPSTAN_ALLOW_UNISOLATED_JOBS)")
	fs.StringVar(&c.artifacts.store, "artifact-store", envOr("CAPSTAN_ARTIFACT_STORE", ""), "where artifacts are kept: empty for this replica's disk (one process), or s3://<bucket> of an S3-compatible store every replica reads (made when missing; its credentials from CAPSTAN_ARTIFACT_ACCESS_KEY and CAPSTAN_ARTIFACT_SECRET_KEY) (CAPSTAN_ARTIFACT_STORE)")
	fs.StringVar(&c.artifacts.endpoint, "artifact-endpoint", envOr("CAPSTAN_ARTIFACT_ENDPOINT", ""), "the S3-compatible store's URL, http(s)://host[:port], for --artifact-store s3://… (CAPSTAN_ARTIFACT_ENDPOINT)")
	fs.StringVar(&c.artifacts.region, "artifact-region", envOr("CAPSTAN_ARTIFACT_REGION", ""), "the bucket's region (default us-east-1) (CAPSTAN_ARTIFACT_REGION)")
	fs.StringVar(&c.jobDir, "job-dir", envOr("CAPSTAN_JOB_DIR", ""), "directory of the operations' working directories, where jobs write; outside the data directory, since a job's mount table names it (default: /var/tmp/capstan-jobs-<hash of the data directory>) (CAPSTAN_JOB_DIR)")
	fs.BoolVar(&c.keepSandboxes, "keep-sandboxes", envOr("CAPSTAN_KEEP_SANDBOXES", "false") == "true", "keep a finished operation's sandbox and outputs in the job directory (for debugging; by default they are removed when the operation ends) (CAPSTAN_KEEP_SANDBOXES)")
	addAnalyzerFlags(fs, &c.analyzer)
	fs.BoolVar(&c.trustTraceparent, "trust-traceparent", envOr("CAPSTAN_TRUST_TRACEPARENT", "false") == "true", "continue the trace a client's traceparent header names (only behind a gateway that sets it; by default a client's header is ignored and each request's span starts a trace of its own) (CAPSTAN_TRUST_TRACEPARENT)")
	fs.StringVar(&c.otlpEndpoint, "otlp-endpoint", envOr("CAPSTAN_OTLP_ENDPOINT", ""), "OpenTelemetry collector receiving traces over OTLP/HTTP, e.g. http://127.0.0.1:4318 (a span per request, per operation, per node attempt, per gate wait and patch decision; docs/OPERATIONS.md); empty: tracing off (CAPSTAN_OTLP_ENDPOINT)")
	proxies := fs.String("trusted-proxies", envOr("CAPSTAN_TRUSTED_PROXIES", ""), "comma-separated CIDRs or addresses of the reverse proxies in front of the server: their connections count toward --max-connections only, and each request through them counts against the client --client-address-header names, at most --max-connections-per-client at once; empty: every peer is a client (CAPSTAN_TRUSTED_PROXIES)")
	fs.StringVar(&c.conns.ClientHeader, "client-address-header", envOr("CAPSTAN_CLIENT_ADDRESS_HEADER", "X-Forwarded-For"), "the header a trusted proxy names its client in: a list of addresses read from the right, the first that is not a trusted proxy (CAPSTAN_CLIENT_ADDRESS_HEADER)")
	egress := fs.String("egress-allow", envOr("CAPSTAN_EGRESS_ALLOW", ""), "comma-separated CIDRs, addresses and host names (*.example.com) http jobs and probes may call; loopback, link-local and metadata addresses only when a CIDR lists them; empty: none (CAPSTAN_EGRESS_ALLOW)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	storeDefaults(&c)
	for _, p := range strings.Split(*proxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			a, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return c, fmt.Errorf("--trusted-proxies: %q is neither a CIDR nor an address", p)
			}
			prefix = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		c.conns.TrustedProxies = append(c.conns.TrustedProxies, prefix.Masked())
	}
	if strings.EqualFold(strings.TrimSpace(c.conns.ClientHeader), "Forwarded") {
		return c, fmt.Errorf("--client-address-header: Forwarded (RFC 7239's for= syntax) is not read; name a header that holds addresses, X-Forwarded-For or X-Real-IP")
	}
	if c.sandbox != "on" && c.sandbox != "off" {
		return c, fmt.Errorf("--sandbox must be on or off, not %q", c.sandbox)
	}
	if c.assessConcurrency < 1 || c.assessConcurrency > 1024 {
		return c, fmt.Errorf("--assess-concurrency must be 1 to 1024, not %d", c.assessConcurrency)
	}
	if c.assessEvery > 0 && c.assessEvery < time.Second {
		return c, fmt.Errorf("--assess-every must be at least 1s (or 0 for each type's interval, negative for none), not %s", c.assessEvery)
	}
	switch c.introspection {
	case "auto", "on", "off":
	default:
		return c, fmt.Errorf("--introspection must be auto, on or off, not %q", c.introspection)
	}
	c.rate.RequestBurst = int(2 * c.rate.Requests)
	c.rate.CostBurst = max(int(2*c.rate.Cost), server.DefaultLimits.MaxCost)
	for _, e := range strings.Split(*egress, ",") {
		if e = strings.TrimSpace(e); e != "" {
			c.egress = append(c.egress, e)
		}
	}
	if _, err := local.ParseEgress(c.egress); err != nil {
		return c, err
	}
	for _, o := range strings.Split(*origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.allowedOrigins = append(c.allowedOrigins, o)
		}
	}
	return c, nil
}

func serve(args []string, stderr io.Writer) int {
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	cfg, err := parseServe(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0 // the usage was asked for and printed
	}
	if err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := runServer(ctx, cfg, log, stderr); err != nil {
		log.Error("capstan stopped", "err", err.Error())
		return 1
	}
	return 0
}

func openStore(cfg serveConfig, log *slog.Logger) (capstan.Store, error) {
	switch cfg.store {
	case "embedded":
		return embedded.Open(cfg.dataDir)
	case "neo4j":
		return cypher.Open(cypher.Config{URI: cfg.neo4jURI, User: cfg.neo4jUser, Password: cfg.neo4jPassword, Database: cfg.neo4jDatabase, Log: log})
	}
	return nil, fmt.Errorf("unknown store %q (want embedded or neo4j)", cfg.store)
}

func runServer(ctx context.Context, cfg serveConfig, log *slog.Logger, stderr io.Writer) error {
	if cfg.tokens == "" && !loopback(cfg.listen) {
		return fmt.Errorf("dev mode (no --tokens file) listens on loopback addresses only, not %s: its tokens are printed to the console and it serves introspection; give a --tokens file to listen elsewhere", cfg.listen)
	}
	tokens, err := loadTokens(cfg, log, stderr)
	if err != nil {
		return err
	}
	gctune.Apply() // the collector as a server runs it, unless GOGC says otherwise
	stopTracing, err := tracing.Start(ctx, cfg.otlpEndpoint)
	if err != nil {
		return fmt.Errorf("--otlp-endpoint: %w", err)
	}
	defer stopTracing()
	store, err := openStore(cfg, log)
	if err != nil {
		return err
	}
	defer store.Close()
	backups := backupFunc(store, cfg.store)
	// The secret key seals the secret store and keys the trace ids.
	secretKey, err := secret.LoadKey("CAPSTAN_SECRET_KEY", cfg.secretKeyFile)
	if err != nil {
		return err
	}
	vault, err := openVault(cfg, store, secretKey)
	if err != nil {
		return err
	}
	analyzer, err := openAnalyzer(ctx, cfg.analyzer, vault.Store)
	if err != nil {
		return err
	}
	// Every log line is masked: no secret value of any organization.
	log = slog.New(secret.NewLogHandler(log.Handler(), vault))
	// client-go logs through klog: into the server's own log, masked,
	// rather than bare on stderr.
	klog.SetSlogLogger(log.With("component", "client-go"))
	if _, shared := vault.Store.(*secret.DBStore); !shared {
		for _, org := range tokens.Organizations() {
			if _, err := vault.Redactor(ctx, org); err != nil {
				return err
			}
		}
	}
	// Replicas on one Neo4j share its operations by shard lease (the
	// embedded store's data directory is locked to one process already).
	lease, _ := store.(shard.Lease)
	store = crashpoint.Wrap(store) // the crash sweep's binary only (build tag crashpoints)
	// What operations record is masked before it is stored.
	store = secret.MaskingStore{Store: store, Vault: vault}
	// Every committed operation change ends its spans (off: no-op), with
	// ids keyed by the secret key the replicas share.
	traceIDs := tracing.NewIDs(secretKey)
	store = tracing.Store{Store: store, IDs: traceIDs}
	// Every committed operation change is published to live subscribers,
	// and an operation started or commanded here wakes this process's
	// executor (on another replica, its tailer does).
	broker := live.NewBroker(0)
	wakes := live.NewWakes()
	store = live.Store{Store: store, Broker: broker, Wakes: wakes}
	production := capstan.DeclareProduction(strings.Split(cfg.production, ",")...)
	log.Info("production environments", "declared", production.Names())
	for _, name := range []string{"prod", "production"} {
		if !production.Is(name) {
			log.Warn("an environment named like production is not declared production: its intents get none of the production rules", "environment", name, "declared", production.Names())
		}
	}
	sandbox := jobSandbox(cfg)
	egress, err := local.ParseEgress(cfg.egress)
	if err != nil {
		return err
	}
	log.Info("job sandbox", "sandbox", sandbox.Describe())
	var notes []string
	if refusal := sandbox.Refusal(); refusal != "" {
		log.Warn("jobs cannot be isolated", "refusal", refusal)
		notes = append(notes, "jobs: "+refusal)
	} else if !sandbox.Isolated() {
		log.Warn("jobs run unisolated", "sandbox", sandbox.Describe())
		notes = append(notes, "jobs: "+sandbox.Describe())
	}
	// Remote jobs and probes reach only catalog hosts the plan bound, and
	// only through the egress allow-list.
	hosts := remote.NewPool(remote.Config{Dial: egress.DialContext})
	defer hosts.Close()
	// Every probe, the executor's and the assessor's, runs through one
	// prober: a command probe in the job sandbox, an http one through the
	// egress allow-list, a remote one on the bound host.
	remoteProbes := remote.Probes(hosts, egress.DialContext)
	remoteProbes["kubernetes"] = kube.Probe{Dial: egress.DialContext}
	remoteProbes["s3"] = s3.Probe{Dial: egress.DialContext}
	remoteProbes["postgres"] = postgres.Probe{Dial: egress.DialContext}
	prober := probe.Prober{Remote: remoteProbes, Client: egress.Client(), Sandbox: sandbox, Resources: store}
	// Health assessments observe what operations built, on demand and on
	// a schedule that runs where the executor runs; a drift they find asks
	// the owners of the operations that bind it for a gate (commands).
	assessor := &observe.Assessor{Store: store, Prober: prober, Secrets: vault, Log: log}
	// The service holds no executor: what it starts or commands reaches
	// the executor through the store (wakes), and the executor asks the
	// service's rules (Hooks). Each is built whole, once.
	svc := &service.Service{Store: store, Now: time.Now, Log: log, Secrets: vault, Production: production, Assessor: assessor,
		Previewer:    kube.PlanPreviewer{Resources: store, Secrets: vault, Dial: egress.DialContext},
		Changes:      broker, // a mutation waits for its command on the operation's changes
		AllowAddress: func(a netip.Addr) bool { return egress.Allows(a.String(), a) == nil }}
	schedule := &observe.Schedule{Assessor: assessor, Store: store, Orgs: tokens.Organizations, Concurrency: cfg.assessConcurrency, Every: cfg.assessEvery, Log: log}
	jobDir, err := jobDirOf(cfg)
	if err != nil {
		return err
	}
	log.Info("job directory", "dir", jobDir)
	artifacts, err := openArtifacts(ctx, cfg.artifacts, cfg.store, filepath.Join(cfg.dataDir, "executor"), log)
	if err != nil {
		return err
	}
	ex := executor.New(executor.Config{Store: store, Log: log, Dir: filepath.Join(cfg.dataDir, "executor"), JobDir: jobDir, Artifacts: artifacts, Hooks: svc, Wakes: wakes, Workers: cfg.workers,
		Lease: lease, LeaseTerm: cfg.executorLease, TraceIDs: traceIDs, Sandbox: sandbox, Egress: egress, Secrets: vault, KeepSandboxes: cfg.keepSandboxes,
		RemoteRunners: map[string]job.Runner{"ssh": remote.Runner{Pool: hosts}, "ansible": remote.AnsibleRunner{Egress: egress, Sandbox: sandbox}, "kubernetes": kube.Runner{Dial: egress.DialContext}, "helm": helm.Runner{Dial: egress.DialContext}, "s3": s3.Runner{Dial: egress.DialContext}},
		Prober:        prober, Analyzer: analyzer, SkipRules: cfg.analyzer.rules == "off", Tenure: func(ctx context.Context) {
			if cfg.assessEvery >= 0 {
				schedule.Run(ctx)
			}
		}})
	defer ex.Stop()
	// Replicas on one Neo4j learn of each other's commits through the
	// timeline tailer: it wakes the executor's loops and feeds this
	// process's subscribers (docs/LIVE.md).
	collectors := []prometheus.Collector{newShardCollector(ex)}
	if timeline, ok := lease.(live.Timeline); ok && lease != nil {
		tailer := &live.Tailer{Timeline: timeline, Broker: broker, Touched: ex.Touched, Log: log}
		collectors = append(collectors, tailerMetrics(tailer)...)
		tailCtx, stopTail := context.WithCancel(ctx)
		tailDone := make(chan struct{})
		go func() {
			defer close(tailDone)
			tailer.Run(tailCtx)
		}()
		defer func() { stopTail(); <-tailDone }()
	}
	tcp, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	ln := server.NewLimitListener(tcp, cfg.conns)
	// The server answers at once; /readyz says not ready until the store
	// answers and the packs and catalog are in place.
	prepared := &atomic.Bool{}
	prepDone := make(chan error, 1)
	go func() {
		err := prepareUntilReady(ctx, svc, tokens.Organizations(), cfg, log)
		if err == nil && ctx.Err() == nil {
			// Resume every unfinished operation once the store answers
			// (on Neo4j, once this process holds the executor lease).
			err = ex.Start(ctx)
			if err == nil {
				prepared.Store(true)
				log.Info("ready")
			}
		}
		prepDone <- err
	}()
	go reloadTokensOnHUP(ctx, cfg, tokens, log)
	trusted, err := trustedDocuments(cfg)
	if err != nil {
		return err
	}
	if trusted != nil {
		collectors = append(collectors, trusted.Collector())
		log.Info("trusted documents", "documents", trusted.Len(), "mode", trusted.Mode)
	}
	closing := make(chan struct{})
	var handler http.Handler = server.Handler(server.Config{Service: svc, Tokens: tokens, Log: log, Ready: prepared.Load, TrustedDocuments: trusted,
		Broker: broker, Collectors: collectors, AllowedOrigins: cfg.allowedOrigins, Done: closing, Profiling: os.Getenv("CAPSTAN_PPROF") == "1",
		RateLimit: cfg.rate, Introspection: cfg.introspection == "on" || (cfg.introspection == "auto" && cfg.tokens == ""),
		NoGraphiQL: !cfg.graphiql, NoConsole: !cfg.console, NoMetrics: cfg.metricsListen != "", ReadyNotes: notes,
		Backup: backups(vault)})
	handler = ln.ClientLimits(handler) // the clients behind --trusted-proxies, each its own places
	if cfg.otlpEndpoint != "" {
		// A span per request. A client's traceparent is read only when
		// trusted: otherwise anyone could hang the server's spans under a
		// trace of their choosing.
		propagators := propagation.NewCompositeTextMapPropagator()
		if cfg.trustTraceparent {
			propagators = propagation.TraceContext{}
		}
		handler = otelhttp.NewHandler(handler, "capstan", otelhttp.WithPropagators(propagators))
	}
	srv := httpServer(cfg, handler)
	log.Info("capstan listening", "addr", "http://"+ln.Addr().String(), "graphql", "http://"+ln.Addr().String()+"/graphql", "store", cfg.store)
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if cfg.metricsListen != "" && cfg.metricsListen != "off" {
		mln, err := net.Listen("tcp", cfg.metricsListen)
		if err != nil {
			srv.Close()
			return fmt.Errorf("--metrics-listen: %w", err)
		}
		msrv := httpServer(cfg, server.MetricsHandler(broker, collectors...))
		defer msrv.Close()
		log.Info("metrics listening", "metrics", "http://"+mln.Addr().String()+"/metrics")
		// A scraper or two: a flood of this listener takes no more
		// than these of the server's file descriptors.
		limited := server.NewLimitListener(mln, server.ConnLimits{Total: 64, PerClient: 16})
		go func() { errc <- msrv.Serve(limited) }()
	}
	select {
	case err := <-errc:
		return err
	case err := <-prepDone:
		if err != nil {
			srv.Close()
			return err
		}
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	log.Info("shutting down")
	// Open subscriptions complete first, then their connections close.
	broker.Close()
	close(closing)
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// openVault opens the secret store with key (from CAPSTAN_SECRET_KEY or
// the key file): the file beside the embedded store; on Neo4j, the
// database every replica shares (sealed with the key they share), which
// prepareSecrets checks once the database answers.
func openVault(cfg serveConfig, store capstan.Store, key []byte) (*secret.Vault, error) {
	if records, ok := store.(secret.Records); ok {
		return secret.NewVault(secret.NewDB(records, key)), nil
	}
	fs, err := secret.OpenFile(cfg.secretStore, key)
	if err != nil {
		return nil, err
	}
	return secret.NewVault(fs), nil
}

// prepareSecrets, on a shared store, checks that the key opens what the
// database holds, copies into it the secrets an earlier version kept in
// the file (those it does not have), and builds every organization's
// redactor.
func prepareSecrets(ctx context.Context, vault *secret.Vault, orgs []string, cfg serveConfig) error {
	db, shared := vault.Store.(*secret.DBStore)
	if !shared {
		return nil
	}
	if err := db.CheckKey(ctx); err != nil {
		return err
	}
	if _, err := os.Stat(cfg.secretStore); err == nil {
		key, err := secret.LoadKey("CAPSTAN_SECRET_KEY", cfg.secretKeyFile)
		if err != nil {
			return err
		}
		file, err := secret.OpenFile(cfg.secretStore, key)
		if err != nil {
			return err
		}
		for _, org := range orgs {
			if err := secret.CopyMissing(ctx, file, vault, org); err != nil {
				return err
			}
		}
	}
	for _, org := range orgs {
		if _, err := vault.Redactor(ctx, org); err != nil {
			return err
		}
	}
	return nil
}

// jobSandbox confines jobs: they never see the data directory, the tokens
// file or the secret store. Where it cannot (--sandbox off, or neither
// root nor user namespaces), shell jobs and command probes are refused
// unless --allow-unisolated-jobs.
func jobSandbox(cfg serveConfig) *local.Sandbox {
	hide := []string{cfg.dataDir, filepath.Dir(cfg.secretStore), cfg.secretKeyFile}
	if cfg.tokens != "" {
		hide = append(hide, cfg.tokens)
	}
	return local.NewSandbox(local.SandboxConfig{UIDBase: uint32(cfg.jobUIDBase), Slots: max(cfg.workers, 64),
		Network: cfg.jobNetwork, Hide: hide, DiskQuota: int64(cfg.jobDiskMiB) << 20, Off: cfg.sandbox == "off", AllowUnisolated: cfg.allowUnisolated})
}

// jobDirOf is the job directory: --job-dir or the executor's default. It
// may neither lie in the data directory nor hold it: a job's mount table
// names the job directory's path, and must name nothing of the data.
func jobDirOf(cfg serveConfig) (string, error) {
	executorDir := filepath.Join(cfg.dataDir, "executor")
	if cfg.jobDir == "" {
		return executor.DefaultJobDir(executorDir), nil
	}
	dir, err := filepath.Abs(cfg.jobDir)
	if err != nil {
		return "", capstan.Errorf(capstan.EINVALID, "--job-dir %q: %v", cfg.jobDir, err)
	}
	data, err := filepath.Abs(cfg.dataDir)
	if err != nil {
		return "", capstan.Errorf(capstan.EINVALID, "--data-dir %q: %v", cfg.dataDir, err)
	}
	if within(dir, data) || within(data, dir) {
		return "", capstan.Errorf(capstan.EINVALID, "--job-dir %s must lie outside the data directory %s, and not hold it: a job's mount table names the job directory", dir, data)
	}
	return dir, nil
}

// within reports whether path is dir or lies inside it (both absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

// httpServer bounds every connection: its headers (size and time), the
// whole request's read, and how long an idle keep-alive connection stays
// open. Writes are bounded per request (server.Handler: the request
// deadline), so streams are not cut by a server-wide write timeout.
func httpServer(cfg serveConfig, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ConnContext:       server.WithConn,
		ReadHeaderTimeout: cfg.readHeaderTimeout,
		ReadTimeout:       server.RequestDeadline,
		IdleTimeout:       cfg.idleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}

// loopback reports whether a listen address is a loopback one
// (127.0.0.0/8, ::1 or localhost).
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// reloadTokensOnHUP reads the tokens file again on SIGHUP: removed or
// expired tokens stop working, and their WebSocket connections close.
func reloadTokensOnHUP(ctx context.Context, cfg serveConfig, tokens *server.Tokens, log *slog.Logger) {
	if cfg.tokens == "" {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			fresh, err := server.LoadTokens(cfg.tokens)
			if err != nil {
				log.Error("tokens file not reloaded", "err", err.Error())
				continue
			}
			tokens.Replace(fresh)
			log.Info("tokens reloaded", "file", cfg.tokens)
		}
	}
}

// loadTokens reads the tokens file, or sets up dev mode: one admin of the
// demo organization whose token is CAPSTAN_DEV_TOKEN, or one made once
// for the data directory and kept in it (dev-token, 0600) so it stays the
// same across restarts, and two approvers (the token plus "-sre" and
// "-sre2": in prod an analyzer's patch needs two people, neither its
// proposer, and one that touches a gate neither its starter). Dev mode
// prints them, and the header to paste, on lines of their own.
func loadTokens(cfg serveConfig, log *slog.Logger, stderr io.Writer) (*server.Tokens, error) {
	if cfg.tokens != "" {
		return server.LoadTokens(cfg.tokens)
	}
	token := os.Getenv("CAPSTAN_DEV_TOKEN")
	if token == "" {
		var err error
		if token, err = devToken(cfg.dataDir); err != nil {
			return nil, err
		}
	}
	sre, sre2 := token+"-sre", token+"-sre2"
	log.Warn("dev mode: no --tokens file; an admin and two approvers (sre) of the demo organization")
	fmt.Fprintf(stderr, "\nCapstan dev mode: no --tokens file. The demo organization's admin and two approvers (sre):\n\n"+
		"  token:      %s\n  header:     {\"Authorization\": \"Bearer %s\"}\n  sre token:  %s\n  sre2 token: %s\n\n"+
		"Console: http://%s/ (sign in with the token); GraphiQL: http://%[5]s/graphiql (paste the header into its Headers tab)\n\n", token, token, sre, sre2, cfg.listen)
	return server.NewTokens([]server.Token{
		{Token: token, Actor: "dev-admin", Organization: DemoOrg, Roles: []string{capstan.RoleAdmin}},
		{Token: sre, Actor: "dev-sre", Organization: DemoOrg, Roles: []string{capstan.RoleSRE}},
		{Token: sre2, Actor: "dev-sre2", Organization: DemoOrg, Roles: []string{capstan.RoleSRE}},
	})
}

// devToken returns the data directory's dev token, making and keeping one
// (only its owner may read it) the first time.
func devToken(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "dev-token")
	if data, err := os.ReadFile(path); err == nil {
		if t := strings.TrimSpace(string(data)); len(t) >= 16 {
			return t, nil
		}
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	token := "dev-" + hex.EncodeToString(b[:])
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return "", fmt.Errorf("keeping the dev token: %w", err)
	}
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("keeping the dev token: %w", err)
	}
	return token, nil
}

// prepareUntilReady runs prepare, retrying while the store is unavailable
// (Neo4j not up yet). Any other error is fatal: bad packs or catalog.
func prepareUntilReady(ctx context.Context, svc *service.Service, orgs []string, cfg serveConfig, log *slog.Logger) error {
	for wait := 250 * time.Millisecond; ; wait = min(wait*2, 2*time.Second) {
		err := prepare(ctx, svc, orgs, cfg)
		if err == nil {
			return nil
		}
		if capstan.ErrorCode(err) != capstan.EUNAVAILABLE {
			return err
		}
		log.Warn("store not available yet; retrying", "err", capstan.ErrorMessage(err), "in", wait.String())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// prepare installs the bundled and extra packs into every organization and
// imports the catalog (or, into an empty organization, the demo catalog).
func prepare(ctx context.Context, svc *service.Service, orgs []string, cfg serveConfig) error {
	if err := prepareSecrets(ctx, svc.Secrets, orgs, cfg); err != nil {
		return err
	}
	var extra []string
	if cfg.packsDir != "" {
		entries, err := os.ReadDir(cfg.packsDir)
		if err != nil {
			return fmt.Errorf("--packs: %w", err)
		}
		for _, e := range entries {
			extra = append(extra, e.Name())
		}
		sort.Strings(extra)
	}
	var catalogDoc []byte
	if cfg.catalog != "" {
		data, err := os.ReadFile(cfg.catalog)
		if err != nil {
			return fmt.Errorf("--catalog: %w", err)
		}
		catalogDoc = data
	}
	sort.Strings(orgs)
	for _, org := range orgs {
		admin := capstan.WithActor(ctx, &capstan.Actor{ID: "capstan", OrganizationID: org, Roles: []string{capstan.RoleAdmin}})
		if err := svc.InstallPacks(admin, org, packs.FS, packs.Order); err != nil {
			return err
		}
		if len(extra) > 0 {
			if err := svc.InstallPacks(admin, org, os.DirFS(cfg.packsDir), extra); err != nil {
				return err
			}
		}
		if catalogDoc != nil {
			if _, err := svc.ImportCatalog(admin, catalogDoc); err != nil {
				return fmt.Errorf("--catalog: %w", err)
			}
		} else if err := svc.SeedDemoCatalog(admin, org, catalog.Demo); err != nil {
			return err
		}
	}
	return nil
}

// trustedDocuments loads --trusted-documents: a manifest file, or
// "console" for the manifest the console's build wrote (in the binary).
func trustedDocuments(cfg serveConfig) (*server.TrustedDocuments, error) {
	switch cfg.trustedDocuments {
	case "":
		return nil, nil
	case "console":
		return server.ConsoleTrustedDocuments(cfg.trustedMode)
	}
	return server.LoadTrustedDocuments(cfg.trustedDocuments, cfg.trustedMode)
}
