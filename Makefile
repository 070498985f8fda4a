# workflow-exporter: the two commands a newcomer needs are `make run` and
# `make test`; see README.md.

GO        ?= go
BIN       := bin/workflow-exporter
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X github.com/prometheus/common/version.Version=$(VERSION) \
             -X github.com/prometheus/common/version.Revision=$(REVISION) \
             -X github.com/prometheus/common/version.Branch=$(shell git rev-parse --abbrev-ref HEAD 2>/dev/null)

.PHONY: all build run test test-go test-static deps deps-run generate bench bench-camunda

all: build

## build: compile the exporter into bin/
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/exporter

## run: start the exporter against a throwaway PostgreSQL with sample rows and a small simulated workload
run: deps-run build
	$(GO) run ./test/localrun -exporter $(BIN)

## test: everything CI runs: static checks, unit + integration tests (race detector on), rule tests, dashboard checks
test: deps test-static test-go test-alerts test-dashboards

test-static:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

# PROMTEST_REQUIRE: a missing Prometheus or Alertmanager binary fails the
# end-to-end tests instead of skipping them (deps installs both).
test-go:
	PROMTEST_REQUIRE=1 $(GO) test -race -count=1 -timeout 30m ./...

## bench: collection cost of each table collector versus table history, against a generic SQL exporter's queries (docs/benchmarks.md)
bench: deps-run
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 30m ./test/bench

## bench-camunda: Camunda collection cost versus engine size and history, REST and engine-database mode, against listing every task and one SQL query (docs/benchmarks.md; starts a Camunda 7.24 engine, about 10 minutes)
bench-camunda: deps
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 90m ./test/benchcamunda

## generate: regenerate every generated file from code (index SQL, dashboards and their ConfigMap, alert rules, README tables)
generate:
	$(GO) generate ./...

deps:
	@bash scripts/install-deps.sh test

deps-run:
	@bash scripts/install-deps.sh run

include alerts/alerts.mk
include dashboards/dashboards.mk
