#!/usr/bin/env bash
# timed.sh MAKE STEP...: runs make targets and prints how long each took,
# so that a CI log says where its minutes went (CONTRIBUTING.md keeps the
# test tiers under 30 minutes on two cores). The steps run in turn; a step
# "a,b|c" runs the branches "a,b" and "c" side by side, the targets of a
# branch in turn, each branch's output printed whole when the step ends
# (side by side they would interleave). Stops after the first step with a
# failed target, with that target's exit status, after printing the times
# so far.
set -uo pipefail
make=$1
shift
times=$(mktemp)
trap 'rm -f "$times"' EXIT
report() {
	echo "== time per target"
	cat "$times"
}

# branch TARGETS: the comma-separated targets in turn, each timed; stops at
# the first failure with its status.
branch() {
	local target t0 status
	for target in ${1//,/ }; do
		t0=$(date +%s)
		echo "== make $target ($(date -u +%H:%M:%S))"
		"$make" --no-print-directory "$target"
		status=$?
		printf '%-16s %5ss%s\n' "$target" "$(($(date +%s) - t0))" "$([[ $status -ne 0 ]] && echo " FAILED (exit $status)")" >>"$times"
		[[ $status -eq 0 ]] || return "$status"
	done
}

start=$(date +%s)
for step in "$@"; do
	IFS='|' read -r -a branches <<<"$step"
	if [[ ${#branches[@]} -eq 1 ]]; then
		branch "$step" || { status=$?; report; exit "$status"; }
		continue
	fi
	outs=() pids=()
	for b in "${branches[@]}"; do
		out=$(mktemp)
		outs+=("$out")
		branch "$b" >"$out" 2>&1 &
		pids+=($!)
	done
	status=0
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}"
		rc=$?
		[[ $status -ne 0 ]] || status=$rc
		cat "${outs[$i]}"
		rm -f "${outs[$i]}"
	done
	if [[ $status -ne 0 ]]; then
		report
		exit "$status"
	fi
done
printf '%-16s %5ss\n' total "$(($(date +%s) - start))" >>"$times"
report
