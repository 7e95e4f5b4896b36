# Capstan. `make help` lists the targets.
GO      ?= go
BIN     := bin/capstan
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
SHELL   := /bin/bash
.SHELLFLAGS := -o pipefail -c
# `make run`, `make demo` and `make demo-patch` read the server's own
# settings from the environment, as `capstan serve` does (README, "Two
# commands"): CAPSTAN_LISTEN (127.0.0.1:8080), CAPSTAN_DATA_DIR (data),
# CAPSTAN_DEV_TOKEN; the demos reach the server at CAPSTAN_LISTEN, or
# CAPSTAN_URL when it is elsewhere.
DATA_DIR = $(or $(CAPSTAN_DATA_DIR),data)
# Every build is -trimpath, the tests' own `go build`s with it: a trimmed
# build's cache entry does not depend on the clone's directory, so a fresh
# clone on a machine that built the same code compiles nothing again.
export GOFLAGS += -trimpath
ifneq ($(filter command line,$(origin LISTEN) $(origin DATA)),)
$(error LISTEN and DATA are not read: set CAPSTAN_LISTEN and CAPSTAN_DATA_DIR instead (README, "Two commands"))
endif

.PHONY: help cluster s3-server crash-sweep system-deps run demo demo-sim demo-real demo-patch demo-patch-sim eval-analyzer build test test-suite test-short js-deps graphiql console screenshots neo4j-jars generate check-generated lint-schema lint-packs bench bench-console floors fuzz load load-curve soak fmt vet clean neo4j

help: ## List the targets.
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

system-deps: ## Install what the tests need from the system when missing (Chromium, util-linux, iproute2): scripts/system-deps.sh.
	scripts/system-deps.sh

run: console build ## Start the server on the embedded store with the bundled packs and demo catalog (the console at /). ANALYZER=openai: the model at CAPSTAN_ANALYZER_ENDPOINT answers failures (docs/ANALYZER.md).
	$(BIN) serve $(if $(filter openai,$(ANALYZER)),--analyzer openai --analyzer-rules off)

demo: build s3-server ## The seed's story. As root, for real: Tempo's chart on the test cluster (started for it, or CAPSTAN_KUBECONFIG's), a dedicated S3 server a sub-operation starts on a test host, a second person's approvals, evidence read from both. Otherwise the simulated story against a running `make run`, saying so first.
	scripts/demo.sh

demo-sim: ## The simulated seed story against a running `make run` (at CAPSTAN_LISTEN or CAPSTAN_URL; its token from CAPSTAN_DEV_TOKEN or CAPSTAN_DATA_DIR/dev-token).
	scripts/demo-sim.sh

demo-real: build system-deps ## The real-targets story as root: 3 test hosts over SSH, linux-service installed, a config edited by hand, DRIFTED with its diff, an approved repair, healthy again.
	scripts/demo-real.sh

eval-analyzer: ## Score the model analyzer on the evaluation set (modelanalyzer/eval): against CAPSTAN_ANALYZER_ENDPOINT and CAPSTAN_ANALYZER_MODEL, or the recorded replies when none is set.
	$(GO) run ./cmd/capstan-eval-analyzer

demo-patch: build system-deps ## The seed's §8 story on the test cluster (started for it, or CAPSTAN_KUBECONFIG's): worker-3 cannot pull, the analyzer's PlanPatch keeps the app off it, two SREs approve, the patched plan rolls out.
	$(GO) run ./internal/withcluster -- scripts/demo-patch-kube.sh

demo-patch-sim: ## The §8 story as a simulated kubeadm cluster create, against a running `make run` (ANALYZER=openai: against `make run ANALYZER=openai`, the model must answer).
	$(if $(filter openai,$(ANALYZER)),CAPSTAN_EXPECT_ANALYZER=ai-agent:model) scripts/demo-patch.sh

build: ## Build bin/capstan.
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/capstan

test: system-deps js-deps check-generated lint-schema vet lint-packs neo4j-jars s3-server ## Run the whole test suite with -race (a line per package as it starts and ends), then every benchmark once at a small size, so none rots unseen; on Neo4j servers and a Kubernetes test cluster started once for the run (or NEO4J_URI's and CAPSTAN_KUBECONFIG's).
	$(GO) build -o bin/testprint ./internal/testprint
	$(GO) build -o bin/withcluster ./internal/withcluster
	$(GO) run ./internal/withneo4j -servers $(NEO4J_SERVERS) -warm=$(NEO4J_WARM) -- bin/withcluster -- $(MAKE) --no-print-directory test-suite

# The pool's size, and whether withneo4j warms each server up (docs/NEO4J.md).
# TEST_JSON=FILE keeps the race suite's `go test -json` events (when each
# test started and ended) for a timeline.
NEO4J_SERVERS ?= 5
NEO4J_WARM ?= true

test-suite: ## The suite itself (what make test runs once its checks pass), on the Neo4j servers NEO4J_URI names: every test with -race, three packages at once, then every benchmark once at a small size, three packages at once (scripts/bench-pass.sh).
	$(GO) test -json -race -count=1 -p 3 -parallel 6 -timeout 30m ./... | tee $(or $(TEST_JSON),/dev/null) | bin/testprint
	scripts/bench-pass.sh

cluster: ## Start a Kubernetes test cluster on loopback for local work (real API server, controllers and scheduler; kwok plays the kubelets): prints `export KUBECONFIG=...`, runs until Ctrl-C (docs/KUBERNETES.md).
	scripts/cluster.sh start

s3-server: bin/versitygw-v1.8.0 ## Build the S3 server the tests start (versitygw, Apache 2.0, at its pinned release, from the Go module proxy) once; as root, also the test hosts' (/usr/local/bin, which they share).
	@# The test hosts' image: minio.install starts the versitygw on a host's
	@# PATH. Root only, as the hosts are.
	@if [ "$$(id -u)" -eq 0 ] && ! cmp -s $< /usr/local/bin/versitygw; then install -m 0755 $< /usr/local/bin/versitygw; fi

bin/versitygw-v1.8.0:
	mkdir -p bin && GOBIN=$(CURDIR)/bin/.versitygw CGO_ENABLED=0 $(GO) install github.com/versity/versitygw/cmd/versitygw@v1.8.0 && mv bin/.versitygw/versitygw $@ && rmdir bin/.versitygw

neo4j-jars: ## Fetch Neo4j's jars once for the tests (skipped when NEO4J_URI is set), saying so.
	@if [ -z "$$NEO4J_URI" ]; then scripts/neo4j/run.sh --fetch; fi

test-short: js-deps ## Run the tests without the race detector (faster local loop).
	$(GO) test -count=1 ./...

js-deps: web/livetest/node_modules/.package-lock.json web/federation/node_modules/.package-lock.json web/graphiql/node_modules/.package-lock.json web/console/node_modules/.package-lock.json ## Install the JavaScript packages (pinned): the live-client and gateway tests, the GraphiQL and console builds.

web/livetest/node_modules/.package-lock.json: web/livetest/package-lock.json
	cd web/livetest && npm ci --no-audit --no-fund

web/federation/node_modules/.package-lock.json: web/federation/package-lock.json
	cd web/federation && npm ci --no-audit --no-fund

web/graphiql/node_modules/.package-lock.json: web/graphiql/package-lock.json
	cd web/graphiql && npm ci --no-audit --no-fund

web/console/node_modules/.package-lock.json: web/console/package-lock.json
	cd web/console && npm ci --no-audit --no-fund

CONSOLE_SOURCES := $(shell find web/console/src web/console/index.html web/console/vite.config.ts web/console/codegen.yml web/console/package-lock.json schema.graphqls -type f -not -path 'web/console/src/gql/*' 2>/dev/null)

server/console/index.html: web/console/node_modules/.package-lock.json $(CONSOLE_SOURCES)
	cd web/console && npx graphql-codegen --config codegen.yml && npm run build

screenshots: console ## Save the console's screenshots (taken by its browser test) to docs/console/.
	mkdir -p docs/console
	CAPSTAN_SCREENSHOTS=$(CURDIR)/docs/console $(GO) test -count=1 -run '^(TestConsoleInABrowser|TestGraphExplorerInABrowser)$$' ./cmd/capstan/

console: server/console/index.html ## Build the console (web/console: TypeScript types from schema.graphqls, then Vite) into server/console when stale.

graphiql: web/graphiql/node_modules/.package-lock.json ## Rebuild the embedded GraphiQL page (server/graphiql) from web/graphiql.
	cd web/graphiql && node build.mjs

generate: ## Regenerate graph/ from schema.graphqls with gqlgen.
	$(GO) run github.com/99designs/gqlgen generate

check-generated: graphiql web/console/node_modules/.package-lock.json ## Fail when graph/, the embedded GraphiQL, the console's TypeScript types or its build are not what gqlgen, codegen and the builds generate.
	@$(GO) run github.com/99designs/gqlgen generate
	@cd web/console && npx graphql-codegen --config codegen.yml >/dev/null && npm run build >/dev/null
	@git diff --exit-code --stat -- graph resolver server/graphiql server/console web/console/src/gql || (echo "generated code is stale: run make generate graphiql console and commit" && exit 1)
	@test -z "$$(git status --porcelain -- graph resolver server/graphiql server/console web/console/src/gql)" || (git status --porcelain -- graph resolver server/graphiql server/console web/console/src/gql; echo "generated files not committed" && exit 1)

lint-schema: web/console/node_modules/.package-lock.json ## Every type, field, enum value, argument and input field of schema.graphqls has a description (graphql-schema-linter).
	cd web/console && npx graphql-schema-linter --rules types-have-descriptions,fields-have-descriptions,enum-values-have-descriptions,arguments-have-descriptions,input-object-values-have-descriptions ../../schema.graphqls federation.graphql

lint-packs: build ## Lint the bundled scenario packs.
	$(BIN) pack lint packs/ packs/simulated/

bench: ## Run every benchmark (planning, candidate search on both stores, executor); Neo4j with the full JIT.
	CAPSTAN_NEO4J_JAVA_OPTS= CAPSTAN_NEO4J_CONFIG= $(GO) test -run '^$$' -bench . -benchmem ./...

bench-console: console ## The console's browser benchmarks (500-node DAG first render, event to screen, dashboard frames with 1,000 operations; the graph explorer's 500-node first render and a health change to the screen) in headless Chromium.
	$(GO) test -run '^$$' -bench 'BenchmarkConsoleInABrowser|BenchmarkGraphExplorerInABrowser' -benchtime 1x ./cmd/capstan/

floors: ## Measure this machine's floors under the benchmark targets: a durable 4 KB write, a Neo4j write transaction, one write to each of 10,000 loopback connections.
	$(GO) test -run '^$$' -bench 'BenchmarkDurableWriteFloor' -benchtime 2000x ./executor/
	$(GO) test -run '^$$' -bench 'BenchmarkManagedWriteFloor' -benchtime 2000x ./cypher/
	$(GO) run ./cmd/capstan-load -floor -subscribers 10000

FUZZ_EXECS ?= 1000000
FUZZ_TARGETS := ./pack:FuzzParse ./catalog:FuzzParse .:FuzzCheckConstraint ./planner:FuzzApplyChanges ./server:FuzzGraphQLRequest ./server:FuzzWebSocketMessage ./executor/remote:FuzzInventory ./executor/remote:FuzzKnownHosts ./playbook:FuzzCheck

fuzz: ## Run every fuzz target for FUZZ_EXECS executions (default 10^6 each); make test runs only their seed corpora (testdata/fuzz).
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; echo "== $$name in $$pkg ($(FUZZ_EXECS) execs)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZ_EXECS)x $$pkg 2>&1 | grep -v 'new interesting' | tail -n 4 || exit 1; \
	done

load: build ## Live-subscription load test on 127.0.0.1 (SUBSCRIBERS=1000 OPERATIONS=100 STEP=50ms).
	$(GO) run ./cmd/capstan-load -capstan $(BIN) -subscribers $(or $(SUBSCRIBERS),1000) -operations $(or $(OPERATIONS),100) -step $(or $(STEP),50ms)

load-curve: build ## The load test at rising event rates (job steps STEPS, default 400ms..0s) to find the highest rate held.
	@for step in $(or $(STEPS),400ms 200ms 100ms 50ms 0s); do \
		echo "== step $$step"; \
		$(MAKE) --no-print-directory load STEP=$$step SUBSCRIBERS=$(or $(SUBSCRIBERS),10000) || exit 1; \
	done

crash-sweep: ## Kill the server right after every durable commit of an operation with a gate, a sub-operation, a patch and a compensation, on both stores; then stall one of two replicas there (SIGSTOP) instead (make test runs a sample).
	CAPSTAN_CRASH_SWEEP=all $(GO) test -count=1 -v -timeout 90m -run '^(TestCrashAtEveryCommit|TestStallAtEveryCommit)$$' ./cmd/capstan/ | grep -E '^(---|    ---|ok|FAIL|PASS)|covered|commits'

soak: ## The soak test at length (SOAK=20000 operations through a real server; goroutines, heap and fds must return to their level).
	SOAK_OPERATIONS=$(or $(SOAK),20000) $(GO) test -count=1 -v -timeout 60m -run '^TestSoakReturnsToItsStartingLevel$$' ./cmd/capstan/

neo4j: ## Run a local Neo4j 5.26 Community on bolt://127.0.0.1:7687 (jars from Maven Central; Java 17).
	scripts/neo4j/run.sh 7687 $(DATA_DIR)/neo4j

fmt: ## Format the code.
	gofmt -w $$(git ls-files '*.go' | grep -v '^graph/')

vet: ## go vet.
	$(GO) vet ./...

clean: ## Remove build output and the default data directory (./data only: a CAPSTAN_DATA_DIR elsewhere is never removed).
	rm -rf bin ./data
