# Dashboard targets. Include from the top-level Makefile:
#   include dashboards/dashboards.mk
# The main module's dashboard tests (generated JSON up to date, bundle rules,
# every catalog metric on some panel, live check against a fake Prometheus)
# run with `go test ./...`; the PromQL check and the linter are packages of the
# separate checks module (checks/promql, checks/dashlint) and need its own
# `go test`.

GO ?= go
DASHBOARD_TEST_FLAGS ?= -race -count=1

.PHONY: test-dashboards generate-dashboards

## test-dashboards: PromQL of every panel against the catalog, and the dashboard linter (strict)
test-dashboards:
	cd checks && $(GO) test $(DASHBOARD_TEST_FLAGS) ./promql/... ./dashlint/...

## generate-dashboards: rewrite dashboards/json/*.json and the Grafana ConfigMap
generate-dashboards:
	$(GO) generate -run 'render dashboards' ./tools/generate
