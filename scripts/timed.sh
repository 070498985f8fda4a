#!/usr/bin/env bash
# timed.sh MAKE TARGET...: runs each make target in turn, as make would run
# them as prerequisites, and prints how long each took, so that a CI log
# says where its minutes went (CONTRIBUTING.md keeps the test tiers under
# 30 minutes on two cores). Stops at the first target that fails, with its
# exit status, after printing the times so far.
set -uo pipefail
make=$1
shift
summary=()
report() {
	echo "== time per target"
	printf '%s\n' "${summary[@]}"
}
start=$(date +%s)
for target in "$@"; do
	t0=$(date +%s)
	echo "== make $target ($(date -u +%H:%M:%S))"
	"$make" --no-print-directory "$target"
	status=$?
	summary+=("$(printf '%-16s %5ss%s' "$target" "$(($(date +%s) - t0))" "$([[ $status -ne 0 ]] && echo " FAILED (exit $status)")")")
	if [[ $status -ne 0 ]]; then
		report
		exit "$status"
	fi
done
summary+=("$(printf '%-16s %5ss' total "$(($(date +%s) - start))")")
report
