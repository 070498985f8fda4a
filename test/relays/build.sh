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
[ $# -gt 0 ] || set -- debezium modulith
exec "$here/../../scripts/mvn-package.sh" "$here" "$@"
