# workflow-exporter: the two commands a newcomer needs are `make demo` and
# `make test`; see README.md.

GO        ?= go
BIN       := bin/workflow-exporter
SIM       := bin/workflow-sim
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X github.com/prometheus/common/version.Version=$(VERSION) \
             -X github.com/prometheus/common/version.Revision=$(REVISION) \
             -X github.com/prometheus/common/version.Branch=$(shell git rev-parse --abbrev-ref HEAD 2>/dev/null)

.PHONY: all build run demo test test-go test-static deps deps-run generate bench alert-matrix

all: build

## build: compile the exporter and the workload simulator into bin/
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/exporter
	$(GO) build -o $(SIM) ./cmd/workflow-sim

## demo: the whole product on 127.0.0.1: PostgreSQL, a Camunda engine, the workload simulator, the exporter, Prometheus with the alert rules, Alertmanager printing every notification (FAST=1: 2m alert windows)
demo: deps build
	$(GO) run ./test/demo -exporter $(BIN) $(if $(FAST),-fast)

## run: the exporter alone against a throwaway PostgreSQL with sample rows and a small workload (no Prometheus, no Alertmanager)
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

## bench: collection cost of each table collector versus table history (idempotency up to 10M rows), against a generic SQL exporter's queries; scrape latency and memory at 10k series, against a plain registry (docs/benchmarks.md)
bench: deps-run
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 30m ./test/bench

## alert-matrix: every fault of the simulator on the real stack, and the alert it must raise, with the measured times (docs/alerts.md)
alert-matrix: deps
	PROMTEST_REQUIRE=1 $(GO) test -count=1 -timeout 30m -run TestAlertMatrix -v ./test/e2e

## generate: regenerate every generated file from code (index SQL, dashboards and their ConfigMap, alert rules, README tables)
generate:
	$(GO) generate ./...

deps:
	@bash scripts/install-deps.sh test

deps-run:
	@bash scripts/install-deps.sh run

include alerts/alerts.mk
include dashboards/dashboards.mk
