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
[ $# -gt 0 ] || set -- camunda operaton
exec "$here/../../scripts/mvn-package.sh" "$here" "$@"
