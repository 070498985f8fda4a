#!/usr/bin/env bash
# Checks the alerting bundle with the Prometheus tools Debian 12 ships (promtool 2.42, amtool 0.25;
# packages prometheus and prometheus-alertmanager):
#   - the rule file loads (promtool check rules) and the Prometheus example config with it;
#   - every rule test in alerts/tests passes (promtool test rules);
#   - deploy/alertmanager.yml loads (amtool check-config) and routes a few alerts as intended.
# The Go tests cover the rest: checks/alertrouting every alert's route and inhibition, alerts/rules
# (the main module's go test) the generator and that the committed rule file is up to date.
# Usage: alerts/test.sh   (PROMTOOL=... AMTOOL=... to use other binaries)
set -euo pipefail

cd "$(dirname "$0")/.."
PROMTOOL=${PROMTOOL:-promtool}
AMTOOL=${AMTOOL:-amtool}
AMCONFIG=deploy/alertmanager.yml

for tool in "$PROMTOOL" "$AMTOOL"; do
	command -v "$tool" >/dev/null || { echo "alerts/test.sh: $tool not found (apt-get install prometheus prometheus-alertmanager)" >&2; exit 1; }
done

echo "== promtool check rules"
"$PROMTOOL" check rules alerts/workflow-alerts.yml alerts/slo-example-rules.yml

echo "== promtool check config deploy/prometheus/prometheus.yml"
"$PROMTOOL" check config deploy/prometheus/prometheus.yml

echo "== promtool test rules"
tests=(alerts/tests/*.yml)
"$PROMTOOL" test rules "${tests[@]}"
cases=$(cat "${tests[@]}" | grep -c '^  - name:')

echo "== amtool check-config $AMCONFIG"
"$AMTOOL" check-config "$AMCONFIG"

echo "== amtool config routes test"
routes=0
expect_route() {
	local want=$1
	shift
	local got
	got=$("$AMTOOL" config routes test --config.file="$AMCONFIG" "$@" 2>/dev/null || true)
	if [[ "$got" != "$want" ]]; then
		echo "routing: {$*} reached '$got', want '$want'" >&2
		exit 1
	fi
	echo "  {$*} -> $got"
	routes=$((routes + 1))
}
expect_route pager alertname=WorkflowOutboxBacklogStalled severity=critical database=orders aggregate_type=Order event_type=OrderFulfillmentSubmitted
expect_route pager alertname=WorkflowOutboxOldestEventTooOld severity=critical database=orders
expect_route ticket alertname=CamundaExternalTaskLockExpirations severity=warning engine=main topic=fulfillment.submit-command
expect_route ticket alertname=WorkflowExporterSourceDown severity=warning source=database name=orders database=orders
expect_route null alertname=WorkflowDuplicatePreventionSpike severity=info database=orders scope=ORDER_FULFILLMENT_SUBMISSION
expect_route ticket alertname=SomethingWithoutSeverity

echo "alerts: $((cases + routes)) passed, 0 failed"
