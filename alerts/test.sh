#!/usr/bin/env bash
# Checks the alerting bundle with two flavors of the Prometheus tools: the ones Debian 12 ships
# (promtool 2.42, amtool 0.25; packages prometheus and prometheus-alertmanager) and the current
# releases scripts/install-deps.sh test builds (promtool 3.x, amtool 0.31; `install-deps.sh
# current-tools` says where). With each:
#   - the rule file loads (promtool check rules) and the Prometheus example config with it;
#   - every rule test in alerts/tests passes (promtool test rules);
#   - deploy/alertmanager.yml loads (amtool check-config) and routes a few alerts as intended
#     (inhibition: checks/alertrouting, with Alertmanager's own inhibitor).
# The Go tests cover the rest: checks/alertrouting every alert's route and inhibition, alerts/rules
# (the main module's go test) the generator and that the committed rule file is up to date.
# Usage: alerts/test.sh   (PROMTOOL=... AMTOOL=... to use other binaries for Debian's)
set -euo pipefail

cd "$(dirname "$0")/.."
AMCONFIG=deploy/alertmanager.yml

current=$(bash scripts/install-deps.sh current-tools)
tool() { awk -v t="$1" '$1 == t { print $2 }' <<<"$current"; }

passed=0
# check NAME PROMTOOL AMTOOL runs every check with one flavor's tools.
check() {
	local flavor=$1 promtool=$2 amtool=$3
	for tool in "$promtool" "$amtool"; do
		command -v "$tool" >/dev/null || {
			echo "alerts/test.sh: $flavor: $tool not found (bash scripts/install-deps.sh test installs and builds them)" >&2
			exit 1
		}
	done
	echo "=== $flavor: $("$promtool" --version 2>&1 | head -1); $("$amtool" --version 2>&1 | head -1)"

	echo "== promtool check rules"
	"$promtool" check rules alerts/workflow-alerts.yml alerts/slo-example-rules.yml

	echo "== promtool check config deploy/prometheus/prometheus.yml"
	"$promtool" check config deploy/prometheus/prometheus.yml

	echo "== promtool test rules"
	local tests=(alerts/tests/*.yml)
	"$promtool" test rules "${tests[@]}"
	passed=$((passed + $(cat "${tests[@]}" | grep -c '^  - name:')))

	echo "== amtool check-config $AMCONFIG"
	"$amtool" check-config "$AMCONFIG"

	echo "== amtool config routes test"
	expect_route() {
		local want=$1
		shift
		local got
		got=$("$amtool" config routes test --config.file="$AMCONFIG" "$@" 2>/dev/null || true)
		if [[ "$got" != "$want" ]]; then
			echo "$flavor routing: {$*} reached '$got', want '$want'" >&2
			exit 1
		fi
		echo "  {$*} -> $got"
		passed=$((passed + 1))
	}
	expect_route pager alertname=WorkflowOutboxBacklogStalled severity=critical database=orders aggregate_type=Order event_type=OrderFulfillmentSubmitted
	expect_route pager alertname=WorkflowOutboxOldestEventTooOld severity=critical database=orders
	expect_route pager alertname=WorkflowCompletedSideEffectTaskOpen severity=critical database=orders engine=main topic=fulfillment.submit-command scope=ORDER_FULFILLMENT_SUBMISSION
	expect_route pager alertname=WorkflowExporterSourceDown severity=critical source=database name=orders database=orders
	expect_route ticket alertname=CamundaExternalTaskLockExpirations severity=warning engine=main topic=fulfillment.submit-command
	expect_route ticket alertname=WorkflowExporterCollectorDown severity=warning source=camunda name=main engine=main collector=camunda_processes
	expect_route null alertname=CamundaExternalTaskDuplicateExecution severity=info engine=main topic=fulfillment.submit-command
	expect_route null alertname=WorkflowDuplicatePreventionSpike severity=info database=orders scope=ORDER_FULFILLMENT_SUBMISSION
	expect_route watchdog alertname=WorkflowExporterWatchdog severity=none
	expect_route ticket alertname=SomethingWithoutSeverity
}

check debian "${PROMTOOL:-promtool}" "${AMTOOL:-amtool}"
check current "$(tool promtool)" "$(tool amtool)"

echo "alerts: $passed passed, 0 failed"
