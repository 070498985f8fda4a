#!/usr/bin/env bash
# Builds the test relays' Maven projects (debezium, modulith), so CI can warm the Maven cache before
# the Go tests run. The Go harnesses (test/harness/relaytest, test/harness/modulithtest) build the
# same way on demand and cache the jars under <repo>/.cache/relays/<name>-<hash>/, keyed by a hash of
# the pom and sources (testkit.MavenBuild).
#
# Usage: test/relays/build.sh [project...]     (default: all projects)
# Env:   MVN_ARGS  extra Maven arguments, e.g. MVN_ARGS=-o once ~/.m2 holds everything.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for tool in mvn java; do
  command -v "$tool" >/dev/null 2>&1 || { echo "build.sh: '$tool' not found in PATH (need Maven 3.8+ and Java 17)" >&2; exit 1; }
done

projects=("$@")
if [ ${#projects[@]} -eq 0 ]; then
  projects=(debezium modulith)
fi

for project in "${projects[@]}"; do
  dir="$here/$project"
  [ -f "$dir/pom.xml" ] || { echo "build.sh: unknown project '$project' (no $dir/pom.xml)" >&2; exit 1; }
  start=$(date +%s)
  # shellcheck disable=SC2086
  (cd "$dir" && mvn -q -B -Dstyle.color=never -DskipTests ${MVN_ARGS:-} package)
  echo "build.sh: $project -> $(ls "$dir"/target/*.jar | grep -v original | head -1) ($(( $(date +%s) - start )) s)"
done
