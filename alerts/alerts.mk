# Alerting bundle targets; included from the top-level Makefile (paths are relative to the
# repository root). Needs the Debian packages prometheus and prometheus-alertmanager
# (promtool, amtool) and Go.

.PHONY: test-alerts generate-alerts

# Rule checks and promtool rule tests, amtool config and routing checks, then the Go tests:
# every alert's route, inhibition, and that alerts/workflow-alerts.yml matches alerts/config.yml.
test-alerts:
	bash alerts/test.sh
	cd tools/alertrouting && go test ./...

# Regenerate alerts/workflow-alerts.yml after changing alerts/config.yml.
generate-alerts:
	cd tools/alertrouting && go generate ./...
