# Alerting bundle targets; included from the top-level Makefile (paths are relative to the
# repository root). Needs the Debian packages prometheus and prometheus-alertmanager
# (promtool, amtool), the current promtool and amtool that scripts/install-deps.sh test builds,
# and Go.

.PHONY: test-alerts generate-alerts check-sloth

GO ?= go

# Rule checks and promtool rule tests, amtool config and routing checks (with Debian's tools and
# the current ones), then the Go routing and inhibition tests of every alert
# (checks/alertrouting, in the separate checks module for the alertmanager library). The
# generator's own tests (alerts/rules: the committed rule file matches alerts/config.yml, rules
# use only catalog metrics) run with the main module's `go test ./...`.
test-alerts:
	bash alerts/test.sh
	cd checks && $(GO) test ./alertrouting/... ./sloth/...

# The example SLO file's Sloth spec through the sloth command itself (`sloth validate`, then
# `sloth generate` and promtool on what it generates). Not part of make test: the command builds
# from its own module (it cannot share the checks module's Prometheus version), several minutes
# cold; the checks module's sloth package checks the spec against Sloth's types on every run.
SLOTH_VERSION ?= v0.16.0
SLOTH_BIN     ?= $(HOME)/.cache/workflow-exporter/sloth-$(SLOTH_VERSION)/sloth
check-sloth:
	@test -x $(SLOTH_BIN) || GOBIN=$(dir $(SLOTH_BIN)) $(GO) install github.com/slok/sloth/cmd/sloth@$(SLOTH_VERSION)
	$(SLOTH_BIN) validate --no-log -i alerts/slo-example.sloth.yml
	$(SLOTH_BIN) generate --no-log -i alerts/slo-example.sloth.yml -o $(CURDIR)/.tmp/sloth-rules.yml
	promtool check rules $(CURDIR)/.tmp/sloth-rules.yml

# Regenerate only the rule files and the SLO examples after changing alerts/config.yml;
# `make generate` (go generate ./tools/generate) regenerates them along with every other
# generated file.
generate-alerts:
	$(GO) generate -run 'render (rules|slos)' ./tools/generate
