# Dashboard targets. Include from the top-level Makefile:
#   include dashboards/dashboards.mk
# The main module's dashboard tests (generated JSON up to date, bundle rules,
# every catalog metric on some panel, live check against a fake Prometheus)
# run with `go test ./...`; the two tools modules are separate Go modules and
# need their own `go test`.

GO ?= go
DASHBOARD_TEST_FLAGS ?= -race -count=1

.PHONY: test-dashboards generate-dashboards

## test-dashboards: PromQL of every panel against the catalog, and the dashboard linter (strict)
test-dashboards:
	cd tools/promqlcheck && $(GO) test $(DASHBOARD_TEST_FLAGS) ./...
	cd tools/dashlint && $(GO) test $(DASHBOARD_TEST_FLAGS) ./...

## generate-dashboards: rewrite dashboards/json/*.json and the Grafana ConfigMap
generate-dashboards:
	$(GO) generate ./dashboards/...
