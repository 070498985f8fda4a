#!/usr/bin/env bash
# Packages Maven projects: each project named is a directory under DIR with a pom.xml. The test
# engines' and the test relays' build.sh call it to warm the Maven cache before the Go tests run;
# the Go harnesses build the same way on demand (testkit.MavenPackage).
#
# Usage: scripts/mvn-package.sh DIR project...
# Env:   MVN_ARGS  extra Maven arguments, e.g. MVN_ARGS=-o once ~/.m2 holds everything.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 DIR project..." >&2; exit 2; }
root="$1"
shift
for tool in mvn java; do
  command -v "$tool" >/dev/null 2>&1 || { echo "build.sh: '$tool' not found in PATH (need Maven 3.8+ and Java 17)" >&2; exit 1; }
done

for project in "$@"; do
  dir="$root/$project"
  [ -f "$dir/pom.xml" ] || { echo "build.sh: unknown project '$project' (no $dir/pom.xml)" >&2; exit 1; }
  start=$(date +%s)
  # shellcheck disable=SC2086
  (cd "$dir" && mvn -q -B -Dstyle.color=never -DskipTests ${MVN_ARGS:-} package)
  echo "build.sh: $project -> $(ls "$dir"/target/*.jar | grep -v original | head -1) ($(( $(date +%s) - start )) s)"
done
