# Alerting bundle targets; included from the top-level Makefile (paths are relative to the
# repository root). Needs the Debian packages prometheus and prometheus-alertmanager
# (promtool, amtool) and Go.

.PHONY: test-alerts generate-alerts

# Rule checks and promtool rule tests, amtool config and routing checks, then the Go tests:
# every alert's route, inhibition, and that alerts/workflow-alerts.yml matches alerts/config.yml.
# -mod=mod: tools/alertrouting replaces the main module with ../.., so a new requirement in the
# main go.mod would otherwise stop it with a missing go.sum entry.
test-alerts:
	bash alerts/test.sh
	cd tools/alertrouting && go test -mod=mod ./...

# Regenerate alerts/workflow-alerts.yml after changing alerts/config.yml.
generate-alerts:
	cd tools/alertrouting && go generate ./...
