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
#                                  .cache/postgresql/; and the current
#                                  Prometheus and Alertmanager the tests run
#                                  beside Debian's, built from their Go
#                                  modules into a cache outside the clone
#                                  (below); also what `make demo` needs
#   scripts/install-deps.sh pg-current-bindir
#                                  prints where that PostgreSQL's bin/ is
#   scripts/install-deps.sh current-tools
#                                  prints "NAME PATH" for each of those
#                                  binaries (prometheus, promtool,
#                                  alertmanager, amtool): where the tests
#                                  (test/harness/promtest, alerts/test.sh)
#                                  find them; while a build of them is under
#                                  way, it waits for it first
#
# INSTALL_DEPS_BUILD_IN_BACKGROUND=1 (what .ci/run sets): the build of the
# current Prometheus and Alertmanager goes on in the background after the
# script returns, so the tests start at once and only those that need the
# binaries wait for them (through current-tools). Cold, the build takes
# minutes (about 14 on 2 busy cores); cached, nothing.
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

# The current Prometheus and Alertmanager of the tests (test/harness/promtest's
# "current" flavor; Debian 12's are 2.42 and 0.25), built with Go and kept
# in ${XDG_CACHE_HOME:-$HOME/.cache}/workflow-exporter/, one directory per
# version, so a machine that keeps its home builds them once:
#   - prometheus and promtool at the version checks/go.mod requires (the
#     one the checks use as a library), built in the checks module with
#     the remove_all_sd tag (static, file and HTTP discovery only: the
#     tests need no other, and the build compiles a fifth fewer packages);
#   - alertmanager and amtool from Alertmanager's own module at the version
#     below: cmd/alertmanager cannot build from checks/go.mod (see the
#     comment on its tool lines), and from v0.32 on its module lacks the web UI the
#     command embeds.
ALERTMANAGER_CURRENT_VERSION=v0.31.1
tools_cache=${XDG_CACHE_HOME:-$HOME/.cache}/workflow-exporter
prometheus_current_version=$(awk '$1 == "github.com/prometheus/prometheus" { print $2; exit }' "$root/checks/go.mod" 2>/dev/null || true)
prometheus_current_dir=$tools_cache/prometheus-${prometheus_current_version:-unknown}
alertmanager_current_dir=$tools_cache/alertmanager-$ALERTMANAGER_CURRENT_VERSION
# Held (flock) while they build; current-tools waits on it. The log is the
# last build's.
build_lock=$tools_cache/build.lock
build_log=$tools_cache/build.log

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
current-tools)
  if [ -z "$prometheus_current_version" ]; then
    echo "no github.com/prometheus/prometheus requirement in $root/checks/go.mod" >&2
    exit 1
  fi
  if [ -e "$build_lock" ] && command -v flock >/dev/null 2>&1; then
    exec 8<"$build_lock"
    if ! flock -n -s 8; then
      echo "waiting for the build of the current Prometheus and Alertmanager (log: $build_log)" >&2
      flock -s 8
    fi
    exec 8<&-
  fi
  for t in prometheus promtool; do echo "$t $prometheus_current_dir/$t"; done
  for t in alertmanager amtool; do echo "$t $alertmanager_current_dir/$t"; done
  if [ -s "$build_log" ] && ! { [ -x "$prometheus_current_dir/prometheus" ] && [ -x "$alertmanager_current_dir/alertmanager" ]; }; then
    echo "the current Prometheus and Alertmanager are not built; the last build's log: $build_log" >&2
  fi
  exit 0
  ;;
*)
  echo "usage: $0 run|test|pg-current-bindir|current-tools" >&2
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

# The commands that build the current Prometheus (first line) and
# Alertmanager (second); printed where they cannot run, run where they can.
# The version stamps are what --version and the *_build_info metrics report
# (module v0.316.0 is Prometheus 3.16.0). Each builds into DIR.tmp and
# renames it: an interrupted build leaves no half directory behind.
current_commands() {
  local v=${prometheus_current_version#v0.} p=github.com/prometheus
  local release=$((10#${v%%.*} / 100)).$((10#${v%%.*} % 100)).${v#*.}
  cat <<EOF
rm -rf "$prometheus_current_dir.tmp" && cd "$root/checks" && GOWORK=off go build -tags remove_all_sd -ldflags "-X $p/common/version.Version=$release" -o "$prometheus_current_dir.tmp/" $p/prometheus/cmd/prometheus $p/prometheus/cmd/promtool && mv "$prometheus_current_dir.tmp" "$prometheus_current_dir"
rm -rf "$alertmanager_current_dir.tmp" && cd / && GOBIN="$alertmanager_current_dir.tmp" GOFLAGS= go install -ldflags "-X $p/common/version.Version=${ALERTMANAGER_CURRENT_VERSION#v}" $p/alertmanager/cmd/alertmanager@$ALERTMANAGER_CURRENT_VERSION $p/alertmanager/cmd/amtool@$ALERTMANAGER_CURRENT_VERSION && mv "$alertmanager_current_dir.tmp" "$alertmanager_current_dir"
EOF
}

have_prometheus_current() { [ -x "$prometheus_current_dir/prometheus" ] && [ -x "$prometheus_current_dir/promtool" ]; }
have_alertmanager_current() { [ -x "$alertmanager_current_dir/alertmanager" ] && [ -x "$alertmanager_current_dir/amtool" ]; }

install_current() {
  [ "$mode" = test ] || return 0
  have_prometheus_current && have_alertmanager_current && return 0
  if [ -z "$prometheus_current_version" ]; then
    echo "no github.com/prometheus/prometheus requirement in $root/checks/go.mod: cannot build the current Prometheus" >&2
    return 1
  fi
  mkdir -p "$tools_cache"
  # One build at a time, whoever starts it: the lock is taken here and held
  # by the build (fd 9), in the foreground or the background.
  exec 9>"$build_lock"
  if [ -n "${INSTALL_DEPS_BUILD_IN_BACKGROUND:-}" ]; then
    if ! lock -n 9; then
      echo "the current Prometheus and Alertmanager are being built (log: $build_log); the tests that need them wait for it" >&2
      exec 9>&-
      return 0
    fi
  else
    lock 9
  fi
  if have_prometheus_current && have_alertmanager_current; then
    exec 9>&-
    return 0
  fi
  local cmds
  cmds=$(current_commands)
  have_prometheus_current && cmds=$(sed 1d <<<"$cmds")
  have_alertmanager_current && cmds=$(sed '$d' <<<"$cmds")
  if [ -n "${INSTALL_DEPS_BUILD_IN_BACKGROUND:-}" ]; then
    echo "building Prometheus $prometheus_current_version (prometheus, promtool) and Alertmanager $ALERTMANAGER_CURRENT_VERSION (alertmanager, amtool) with Go into $tools_cache in the background (log: $build_log; minutes the first time); the tests that need them wait for it; nothing else outside the repository and Go's caches changes" >&2
    sed 's/^/+ /' <<<"$cmds" >&2
    (run_builds "$cmds") >"$build_log" 2>&1 </dev/null &
    exec 9>&-
    return 0
  fi
  echo "building Prometheus $prometheus_current_version (prometheus, promtool) and Alertmanager $ALERTMANAGER_CURRENT_VERSION (alertmanager, amtool) with Go into $tools_cache (minutes the first time); nothing else outside the repository and Go's caches changes" >&2
  sed 's/^/+ /' <<<"$cmds" >&2
  run_builds "$cmds" 2>&1 | tee "$build_log" >&2
  exec 9>&-
}

# lock is flock where there is one (util-linux; elsewhere builds are not
# serialised).
lock() { if command -v flock >/dev/null 2>&1; then flock "$@"; fi; }

# run_builds runs the build commands, one per line, timing each.
run_builds() {
  local cmd start
  while IFS= read -r cmd; do
    start=$(date +%s)
    bash -euo pipefail -c "$cmd" </dev/null
    echo "built in $(($(date +%s) - start))s: ${cmd##* && mv }" >&2
  done <<<"$1"
}

if [ ${#missing[@]} -eq 0 ]; then
  install_pg_current
  install_current
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
  install_current
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
if [ "$mode" = test ] && [ -n "$prometheus_current_version" ] && ! { have_prometheus_current && have_alertmanager_current; }; then
  echo "then build the current Prometheus and Alertmanager of the tests:" >&2
  current_commands >&2
fi
exit 1
