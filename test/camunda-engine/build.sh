#!/usr/bin/env bash
# Builds the test engine jars of the default flavors (camunda, operaton), or of the flavors named
# (any directory here with a pom.xml: camunda-7.22, camunda-7.20, camunda-7.19, cibseven), so CI can
# warm the Maven cache before the Go tests run. The Go harness (test/harness/camundatest) builds the same way on demand and
# caches the jar under <repo>/.cache/camunda-engine/<flavor>-<hash>/, keyed by a hash of the pom and sources.
#
# Usage: test/camunda-engine/build.sh [flavor...]     (default: camunda operaton)
# Env:   MVN_ARGS  extra Maven arguments, e.g. MVN_ARGS=-o once ~/.m2 holds everything.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for tool in mvn java; do
  command -v "$tool" >/dev/null 2>&1 || { echo "build.sh: '$tool' not found in PATH (need Maven 3.8+ and Java 17)" >&2; exit 1; }
done

flavors=("$@")
if [ ${#flavors[@]} -eq 0 ]; then
  flavors=(camunda operaton)
fi

for flavor in "${flavors[@]}"; do
  dir="$here/$flavor"
  [ -f "$dir/pom.xml" ] || { echo "build.sh: unknown flavor '$flavor' (no $dir/pom.xml)" >&2; exit 1; }
  start=$(date +%s)
  # shellcheck disable=SC2086
  mvn -q -B -Dstyle.color=never -DskipTests ${MVN_ARGS:-} -f "$dir/pom.xml" package
  echo "build.sh: $flavor -> $dir/target/test-engine.jar ($(( $(date +%s) - start )) s)"
done
