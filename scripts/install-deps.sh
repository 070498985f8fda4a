#!/usr/bin/env bash
# Checks for, and on Debian as root installs, what `make run` and `make test`
# need. Used by the Makefile and by .ci/run, so a newcomer and CI install the
# same things the same way.
#
#   scripts/install-deps.sh run    PostgreSQL server binaries (make run)
#   scripts/install-deps.sh test   + Prometheus/promtool, Alertmanager/amtool,
#                                  Java 17 + Maven (Camunda test engine), unzip
#                                  and xz, Chromium (headless, for the status
#                                  page's browser test and its screenshot);
#                                  and the second PostgreSQL major the
#                                  table collector tests run on (make
#                                  test-pg-current), unpacked from Maven Central's
#                                  embedded PostgreSQL binaries into
#                                  .cache/postgresql/; also what `make demo` needs
#   scripts/install-deps.sh pg-current-bindir
#                                  prints where that PostgreSQL's bin/ is
#
# It never disturbs the host: before installing it says exactly which Debian
# packages apt will install (dependencies included), and afterwards it stops
# only the services of packages it installed in this same run (their
# packages start them; the tests start their own servers). A service that was
# there before is left exactly as it was: never stopped, started or
# reconfigured. Elsewhere (not Debian, or not root) it installs nothing and
# prints the exact commands to run, exiting non-zero.
set -euo pipefail

mode=${1:-test}
root=$(cd "$(dirname "$0")/.." && pwd)

# The second PostgreSQL major of the tests (Debian 12's is 15): the newest
# release, from io.zonky.test.postgres:embedded-postgres-binaries-<platform>.
PG_CURRENT_VERSION=18.7.0
pg_current_dir=$root/.cache/postgresql/$PG_CURRENT_VERSION

# For the script's own test (scripts/installdeps): where Debian's marker
# file and PostgreSQL binaries are.
debian_version_file=${INSTALL_DEPS_DEBIAN_VERSION_FILE:-/etc/debian_version}
pg_lib_dir=${INSTALL_DEPS_PG_LIB_DIR:-/usr/lib/postgresql}

case "$mode" in
run | test) ;;
pg-current-bindir)
  echo "$pg_current_dir/bin"
  exit 0
  ;;
*)
  echo "usage: $0 run|test|pg-current-bindir" >&2
  exit 2
  ;;
esac

have_initdb() {
  ls "$pg_lib_dir"/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1
}

missing=()
have_initdb || missing+=(postgresql)
if [ "$mode" = test ]; then
  command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
  command -v amtool >/dev/null 2>&1 && { command -v prometheus-alertmanager >/dev/null 2>&1 || command -v alertmanager >/dev/null 2>&1; } || missing+=(prometheus-alertmanager)
  if ! command -v java >/dev/null 2>&1 || ! java -version 2>&1 | grep -Eq 'version "(1[7-9]|2[0-9])'; then
    missing+=(openjdk-17-jdk-headless)
  fi
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  command -v unzip >/dev/null 2>&1 || missing+=(unzip)
  command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
fi
if ! command -v go >/dev/null 2>&1; then
  echo "Go is required (go.mod names the version); install it from your distribution or go.dev." >&2
  exit 1
fi

# pg_current_platform is the embedded-postgres-binaries artifact of this
# machine.
pg_current_platform() {
  case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) echo linux-amd64 ;;
  Linux/aarch64 | Linux/arm64) echo linux-arm64v8 ;;
  *) return 1 ;;
  esac
}

# The commands that fetch and unpack the second PostgreSQL major; printed
# where they cannot run, run where they can.
pg_current_commands() {
  local platform=$1
  local artifact=embedded-postgres-binaries-$platform
  local jar="\${HOME}/.m2/repository/io/zonky/test/postgres/$artifact/$PG_CURRENT_VERSION/$artifact-$PG_CURRENT_VERSION.jar"
  cat <<EOF
mvn -q dependency:get -Dtransitive=false -Dartifact=io.zonky.test.postgres:$artifact:$PG_CURRENT_VERSION
mkdir -p "$pg_current_dir.tmp" && unzip -p "$jar" '*.txz' | tar -xJ -C "$pg_current_dir.tmp" && mv "$pg_current_dir.tmp" "$pg_current_dir"
EOF
}

install_pg_current() {
  [ "$mode" = test ] || return 0
  [ -x "$pg_current_dir/bin/initdb" ] && return 0
  local platform
  if ! platform=$(pg_current_platform); then
    echo "no embedded PostgreSQL $PG_CURRENT_VERSION for $(uname -s)/$(uname -m): make test-pg-current needs PG_BINDIR pointing at a PostgreSQL ${PG_CURRENT_VERSION%%.*} bin directory" >&2
    return 0
  fi
  if ! command -v mvn >/dev/null 2>&1 || ! command -v unzip >/dev/null 2>&1 || ! command -v xz >/dev/null 2>&1; then
    echo "then fetch PostgreSQL $PG_CURRENT_VERSION for the table collector tests (into $pg_current_dir):" >&2
    pg_current_commands "$platform" >&2
    return 1
  fi
  echo "downloading PostgreSQL $PG_CURRENT_VERSION server binaries (Maven Central, io.zonky.test.postgres:embedded-postgres-binaries-$platform:$PG_CURRENT_VERSION) into $pg_current_dir; nothing outside the repository and ~/.m2 changes" >&2
  rm -rf "$pg_current_dir.tmp"
  local cmds
  cmds=$(pg_current_commands "$platform")
  sed 's/^/+ /' <<<"$cmds" >&2
  bash -euo pipefail -c "$cmds"
}

if [ ${#missing[@]} -eq 0 ]; then
  install_pg_current
  exit 0
fi

if [ -r "$debian_version_file" ] && [ "$(id -u)" = 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Exactly what apt will install, dependencies included, before it does.
  plan=$(apt-get install -s --no-install-recommends "${missing[@]}" | awk '/^Inst /{print $2}' | tr '\n' ' ')
  echo "missing: ${missing[*]}" >&2
  echo "installing with apt-get install --no-install-recommends ${missing[*]}; apt installs these packages: ${plan% }" >&2
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
  install_pg_current
  exit 0
fi

echo "missing: ${missing[*]}" >&2
if [ -r "$debian_version_file" ]; then
  echo "install with: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
else
  echo "not a Debian system: nothing was installed. Install the equivalents of these Debian packages:" >&2
  echo "  ${missing[*]}" >&2
  echo "(on Debian/Ubuntu: sudo apt-get install -y --no-install-recommends ${missing[*]})" >&2
fi
platform=$(pg_current_platform) && [ "$mode" = test ] && [ ! -x "$pg_current_dir/bin/initdb" ] && {
  echo "then fetch PostgreSQL $PG_CURRENT_VERSION for the table collector tests:" >&2
  pg_current_commands "$platform" >&2
}
exit 1
