#!/usr/bin/env bash
# Checks for, and on Debian as root installs, what `make run` and `make test`
# need. Used by the Makefile and by .ci/run, so a newcomer and CI install the
# same things the same way.
#
#   scripts/install-deps.sh run    PostgreSQL server binaries (make run)
#   scripts/install-deps.sh test   + Prometheus/promtool, Alertmanager/amtool,
#                                  Java 17 + Maven (Camunda test engine);
#                                  also what `make demo` needs
#
# Elsewhere (not Debian, or not root) it prints the exact command to run and
# exits non-zero.
set -euo pipefail

mode=${1:-test}
missing=()

have_initdb() {
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1
}

have_initdb || missing+=(postgresql)
if [ "$mode" = test ]; then
  command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
  command -v amtool >/dev/null 2>&1 && { command -v prometheus-alertmanager >/dev/null 2>&1 || command -v alertmanager >/dev/null 2>&1; } || missing+=(prometheus-alertmanager)
  if ! command -v java >/dev/null 2>&1 || ! java -version 2>&1 | grep -Eq 'version "(1[7-9]|2[0-9])'; then
    missing+=(openjdk-17-jdk-headless)
  fi
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
fi
if ! command -v go >/dev/null 2>&1; then
  echo "Go is required (go.mod names the version); install it from your distribution or go.dev." >&2
  exit 1
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ -r /etc/debian_version ] && [ "$(id -u)" = 0 ]; then
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian's packages may start their daemons where an init system runs;
  # the tests start their own on free ports, so stop the ones this run
  # installed (and only those: a service that was there before is left
  # exactly as it was).
  for pkg in "${missing[@]}"; do
    case "$pkg" in
      postgresql | prometheus | prometheus-alertmanager) svc=$pkg ;;
      *) continue ;;
    esac
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
      echo "stopping $svc (started by its package install just now; the tests run their own)" >&2
      systemctl stop "$svc" || true
    fi
  done
  exit 0
fi

echo "missing: ${missing[*]}" >&2
if [ -r /etc/debian_version ]; then
  echo "install with: sudo apt-get install -y ${missing[*]}" >&2
else
  echo "install the equivalents of the Debian packages: ${missing[*]}" >&2
  echo "(on Debian/Ubuntu: sudo apt-get install -y ${missing[*]})" >&2
fi
exit 1
