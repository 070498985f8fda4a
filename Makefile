# workflow-exporter: the two commands a newcomer needs are `make demo` and
# `make test`; see README.md.

GO        ?= go
BIN       := bin/workflow-exporter
SIM       := bin/workflow-sim
DEMO      := bin/workflow-demo
# Version stamps (VERSION, REVISION, BRANCH, BUILD_USER, BUILD_DATE) default
# to the VERSION file and git; override any of them on the command line, e.g.
# make release VERSION=0.2.0. scripts/release.sh applies them, for the
# Dockerfile too.
DIST      ?= dist

.PHONY: all build image release run demo test test-unit test-go test-static test-k8s test-pg-current test-fuzz deps deps-run generate bench bench-write-rate bench-camunda bench-camunda-topics bench-history bench-engine-cost bench-replicas bench-memory alert-matrix

all: build

## build: compile the exporter (static, version-stamped) and the workload simulator into bin/
build:
	GO=$(GO) bash scripts/release.sh build $(BIN)
	$(GO) build -o $(SIM) ./cmd/workflow-sim

## image: the container image, stamped like make release (needs Docker)
image:
	docker build --build-arg VERSION="$$(bash scripts/release.sh stamp VERSION)" \
		--build-arg REVISION="$$(bash scripts/release.sh stamp REVISION)" \
		--build-arg BRANCH="$$(bash scripts/release.sh stamp BRANCH)" \
		--build-arg BUILD_USER="$$(bash scripts/release.sh stamp BUILD_USER)" \
		--build-arg BUILD_DATE="$$(bash scripts/release.sh stamp BUILD_DATE)" \
		-t workflow-exporter:"$$(bash scripts/release.sh stamp VERSION)" .

## release: static binaries for linux/amd64, linux/arm64 and darwin/arm64, packed with LICENSE and CHANGELOG.md, and sha256sums.txt, in dist/ (PLATFORMS="os/arch ..." for others)
release:
	GO=$(GO) bash scripts/release.sh dist $(DIST)

## demo: the whole product on 127.0.0.1: PostgreSQL, a Camunda engine, the workload simulator, the exporter, Prometheus with the alert rules, Alertmanager printing every notification (FAST=1: 1m alert windows)
# Built and run, not `go run`: go run exits 1 whenever it received a SIGINT,
# however its program ended (golang/go#40467), and make would report Error 1
# after the demo's clean stop on Ctrl-C.
demo: deps build
	$(GO) build -o $(DEMO) ./tools/demo
	$(DEMO) -exporter $(BIN) $(if $(FAST),-fast)

## run: the exporter alone against a throwaway PostgreSQL with sample rows and the workload simulator (no Prometheus, no Alertmanager; a Camunda engine where Java and Maven are installed)
run: deps-run build
	$(GO) run ./tools/demo -exporter $(BIN) -run

## test: everything CI runs: static checks, unit + integration tests (race detector on), rule tests, dashboard checks, the Kubernetes manifests and Helm chart
# After test-go, the second PostgreSQL major runs beside the checks
# module's targets ("|": side by side, "," in turn; scripts/timed.sh): the
# two cores have room for both, and each prints its output whole. The
# fuzzers run alone, last: beside test-pg-current one failed with "context
# deadline exceeded" as its fuzz time ran out (Go's fuzzing coordinator
# under load), no input at fault.
TEST_TARGETS = deps test-static test-go 'test-pg-current|test-alerts,test-dashboards,test-k8s' test-fuzz
test:
	@bash scripts/timed.sh $(MAKE) $(TEST_TARGETS)

## test-unit: the fast tier, go test -short: every test that starts no PostgreSQL, JVM, Prometheus, Alertmanager, browser or exporter process (the harnesses skip the others); under a minute with a warm build cache
test-unit:
	$(GO) test -short -count=1 ./...

# The second PostgreSQL major (Debian 12's is 15), unpacked by scripts/install-deps.sh test.
PG_CURRENT_BINDIR = $(shell bash scripts/install-deps.sh pg-current-bindir)
PG_CURRENT_MAJOR  = $(firstword $(subst ., ,$(notdir $(patsubst %/bin,%,$(PG_CURRENT_BINDIR)))))
## test-pg-current: everything that needs PostgreSQL and no Camunda engine, again on the second PostgreSQL major (PGTEST_MAJOR makes a wrong server fail): the table collectors, joins, status lists and check command (internal/sources), the PostgreSQL access layer, the harness, and the database fault and leak tests. The build tag pgonly leaves out the test files that start an engine (they begin with //go:build !pgonly).
# Without the race detector: test-go ran the same code with it, on the
# first major; here the SQL meets the second (longest package first).
PG_CURRENT_PACKAGES = ./test/reliability/ ./collectors/tables/ ./collectors/engine/ ./internal/sources/ ./blocks/pgsource/ ./blocks/pgschema/ ./test/harness/pgtest/
test-pg-current:
	PG_BINDIR=$(PG_CURRENT_BINDIR) PGTEST_MAJOR=$(PG_CURRENT_MAJOR) $(GO) test -count=1 -tags pgonly $(PG_CURRENT_PACKAGES)

# The fuzz targets (package:target). test-go runs their seed corpora and
# every case a fuzzer found (testdata/fuzz/) as plain tests; test-fuzz
# fuzzes each for FUZZTIME. A failure writes the input to the package's
# testdata/fuzz/: fix the code and commit the input as a regression case.
FUZZ_TARGETS = config:FuzzParse camunda:FuzzDecode camunda:FuzzErrorBody blocks/labellimit:FuzzLimiter blocks/labellimit:FuzzLimiterOffer blocks/labellimit:FuzzRanked blocks/signature:FuzzOf
FUZZTIME    ?= 5s

## test-fuzz: fuzz the config loader, the Camunda response decoding and the label folding and the error signatures, each for FUZZTIME (5s)
test-fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzzing $${t##*:} in ./$${t%%:*} for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t##*:}\$$" -fuzztime $(FUZZTIME) ./$${t%%:*}; \
	done

## test-k8s: render the Helm chart with Helm and validate it and deploy/kubernetes against the Kubernetes and prometheus-operator schemas, Prometheus scraping the exporter as the ServiceMonitor says (checks/k8s), and deploy/compose against the Compose schema (checks/compose), in the separate checks module
test-k8s:
	cd checks && $(GO) test -count=1 ./k8s/... ./compose/...

## test-static: gofmt, go vet and golangci-lint (.golangci.yml) on both modules (the main one and checks/)
# golangci-lint builds from its own module at GOLANGCI_LINT_VERSION (go
# install, into .cache/bin, once per version): as a tool line of the checks
# module its dependencies would join that module's versions and move the
# ones Prometheus builds with.
GOLANGCI_LINT_VERSION = v2.15.0
GOLANGCI_LINT = $(CURDIR)/.cache/bin/golangci-lint-$(GOLANGCI_LINT_VERSION)
test-static:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd checks && $(GO) vet ./...
	@test -x $(GOLANGCI_LINT) || (GOBIN=$(CURDIR)/.cache/bin.tmp GOFLAGS= GOWORK=off $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) && mkdir -p $(CURDIR)/.cache/bin && mv $(CURDIR)/.cache/bin.tmp/golangci-lint $(GOLANGCI_LINT) && rmdir $(CURDIR)/.cache/bin.tmp)
	$(GOLANGCI_LINT) run ./...
	cd checks && $(GOLANGCI_LINT) run ./...

# PROMTEST_REQUIRE: a missing tool (Prometheus, Alertmanager, promtool,
# Chromium) fails the tests that need it instead of skipping them (deps
# installs them; test/harness/testkit's Tool decides).
# STATUS_SCREENSHOTS: where the status page's browser test saves its
# screenshots (test artifacts).
# The longest packages are named first: go test starts packages in the
# order given (two at a time on two cores), and ./... alone would start
# test/e2e, the longest by far, after most of the others, leaving one core
# idle at the end while it runs on alone.
LONGEST_PACKAGES = ./test/e2e ./collectors/engine ./test/reliability ./test/harness/promtest ./collectors/tables
test-go:
	PROMTEST_REQUIRE=1 STATUS_SCREENSHOTS=$(CURDIR)/.tmp/screenshots $(GO) test -race -count=1 -timeout 30m $(LONGEST_PACKAGES) ./...

## bench: collection cost of each table collector versus table history (idempotency up to 10M rows), against a generic SQL exporter's queries, and versus write rate (bench-write-rate); scrape latency and memory at 10k series, against a plain registry (docs/benchmarks.md)
bench: deps-run
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 120m ./test/bench/tables

## bench-write-rate: collection cost of each table collector at 100, 2,000 and 10,000 rows a second sustained past late_commit_window, against one indexed count of the counters' windows, checking each row counts once (docs/benchmarks.md; part of make bench)
bench-write-rate: deps-run
	$(GO) test -run '^$$' -bench WriteRate -benchtime 1x -count 1 -timeout 120m ./test/bench/tables

## alert-matrix: every fault of the simulator on the real stack, and the alert it must raise, with the measured times (docs/alerts.md)
alert-matrix: deps
	PROMTEST_REQUIRE=1 $(GO) test -count=1 -timeout 30m -run TestAlertMatrix -v ./test/e2e

## bench-horizon: the retention horizon's loose index scan on idempotency tables of 1M and 5M rows with 10 to 1000 scopes, against a GROUP BY over the finished rows (docs/benchmarks.md; about 5 minutes)
.PHONY: bench-horizon
bench-horizon: deps-run
	$(GO) test -run '^$$' -bench RetentionHorizon -benchtime 1x -count 1 -timeout 30m ./test/bench/tables/horizon

## bench-camunda: Camunda collection cost versus engine size and history, REST and engine-database mode, against listing every task and one SQL query (docs/benchmarks.md; starts a Camunda 7.24 engine, about 10 minutes)
bench-camunda: deps
	$(GO) test -run '^$$' -bench CamundaCollection -benchtime 1x -count 1 -timeout 90m ./test/bench/camunda

## bench-camunda-topics: Camunda collection cost versus the number of topics (200, 1,000, 2,000), REST and engine-database mode, at the defaults with label_value_limit covering the topics, each collection under the default timeout (docs/benchmarks.md; starts a Camunda 7.24 engine, about 20 minutes)
bench-camunda-topics: deps
	$(GO) test -run '^$$' -bench ThousandsOfTopics -benchtime 1x -count 1 -timeout 90m ./test/bench/camunda

## bench-history: the engine-database mode's history count (camunda_history) on 1M process instances made by SQL in the engine's schema, against a full count of the table (docs/benchmarks.md; about a minute)
bench-history: deps
	$(GO) test -run '^$$' -bench HistoryCount -benchtime 1x -count 1 -timeout 30m ./test/bench/history

## bench-memory: the exporter's resident memory with 1M idempotency records that absorbed a duplicate and 200k external tasks under lock tracking, against the same binary over empty tables, and with GOMEMLIMIT (docs/benchmarks.md; starts a Camunda 7.24 engine, about 10 minutes)
bench-memory: deps
	$(GO) test -run '^$$' -bench ExporterMemory -benchtime 1x -count 1 -timeout 60m ./test/bench/memory

## bench-replicas: what a second replica costs the sources: statements on PostgreSQL (pg_stat_statements) and requests to a Camunda engine with one exporter, then two, scraped at the same interval (docs/benchmarks.md; starts a Camunda 7.24 engine, about 6 minutes)
bench-replicas: deps
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 30m ./test/bench/replicas

## bench-engine-cost: what the exporter costs a Camunda engine under live traffic: completions per second and engine+database CPU per completion of saturating workers, in 10 pairs of windows without and with the exporter per configuration (REST at 30s and 5s, engine-database mode), the median ratio with its spread and confidence interval, and the exporter's database time (docs/benchmarks.md; about 80 minutes)
bench-engine-cost: deps
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 150m ./test/bench/enginecost

## generate: regenerate every generated file from code (index SQL, dashboards and their ConfigMap, alert rules, the tables of docs/metrics.md and docs/database.md)
generate:
	$(GO) generate ./tools/generate

deps:
	@bash scripts/install-deps.sh test

deps-run:
	@bash scripts/install-deps.sh run

include alerts/alerts.mk
include dashboards/dashboards.mk
