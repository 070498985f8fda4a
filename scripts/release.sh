#!/usr/bin/env bash
# Builds the release artifacts of workflow-exporter, or prints the linker flags
# that stamp a build. The Makefile (make build, make release) and the
# Dockerfile use it, so every binary carries the same stamps in the same way.
#
#   scripts/release.sh ldflags        the -ldflags value (version, revision, branch,
#                                     build user, build date)
#   scripts/release.sh stamp NAME     one stamp's value (VERSION, REVISION, BRANCH, BUILD_USER,
#                                     BUILD_DATE), for make image's build arguments
#   scripts/release.sh build OUT      one static binary for GOOS/GOARCH (default: this host) at OUT
#   scripts/release.sh dist [DIR]     for each of PLATFORMS a static binary packed as
#                                     DIR/workflow-exporter-VERSION.OS-ARCH.tar.gz (with LICENSE
#                                     and CHANGELOG.md), and DIR/sha256sums.txt (default DIR: dist)
#
# Stamps come from the environment, with these defaults:
#   VERSION     the VERSION file          REVISION    git rev-parse HEAD, else "unknown"
#   BRANCH      the current git branch    BUILD_USER  user@host
#   BUILD_DATE  SOURCE_DATE_EPOCH if set, else now (UTC, 20060102-15:04:05 as promu writes it)
#   PLATFORMS   "linux/amd64 linux/arm64 darwin/arm64"
#
# Binaries are built with CGO_ENABLED=0 and -trimpath: the Linux ones are
# statically linked; macOS binaries always link the system library
# dynamically, but need nothing else. Packing needs GNU tar (for
# reproducible archives) and sha256sum.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
# The shipped binaries build from go.mod alone, never from the workspace
# (go.work also joins the checks module, whose go.mod may pick other
# versions of shared dependencies; test/layers checks the two agree).
export GOWORK=off
pkg=github.com/prometheus/common/version

git_or() {
	local fallback=$1
	shift
	if command -v git >/dev/null 2>&1 && out=$(git "$@" 2>/dev/null) && [ -n "$out" ]; then
		echo "$out"
	else
		echo "$fallback"
	fi
}

VERSION=${VERSION:-$(tr -d ' \n' <VERSION)}
REVISION=${REVISION:-$(git_or unknown rev-parse HEAD)}
BRANCH=${BRANCH:-$(git_or unknown rev-parse --abbrev-ref HEAD)}
BUILD_USER=${BUILD_USER:-$(id -un 2>/dev/null || echo unknown)@$(hostname 2>/dev/null || echo unknown)}
if [ -z "${BUILD_DATE:-}" ]; then
	if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
		BUILD_DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d-%H:%M:%S)
	else
		BUILD_DATE=$(date -u +%Y%m%d-%H:%M:%S)
	fi
fi
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64 darwin/arm64}

for v in VERSION REVISION BRANCH BUILD_USER BUILD_DATE; do
	case "${!v}" in
	*[[:space:]\"\'\\]*)
		echo "release.sh: $v=${!v}: must not contain white space, quotes or backslashes" >&2
		exit 2
		;;
	"")
		echo "release.sh: $v is empty" >&2
		exit 2
		;;
	esac
done

ldflags() {
	echo "-s -w -X $pkg.Version=$VERSION -X $pkg.Revision=$REVISION -X $pkg.Branch=$BRANCH -X $pkg.BuildUser=$BUILD_USER -X $pkg.BuildDate=$BUILD_DATE"
}

build() {
	local out=$1
	CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$(ldflags)" -o "$out" ./cmd/exporter
}

dist() {
	local dir=${1:-dist}
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	local epoch=${SOURCE_DATE_EPOCH:-$(git_or 0 log -1 --format=%ct)}
	local archives=()
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	for p in $PLATFORMS; do
		local os=${p%/*} arch=${p#*/}
		local name=workflow-exporter-$VERSION.$os-$arch
		echo "building $name" >&2
		mkdir -p "$work/$name"
		GOOS=$os GOARCH=$arch build "$work/$name/workflow-exporter"
		cp LICENSE CHANGELOG.md "$work/$name/"
		tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
			-C "$work" -cf - "$name" | gzip -9 -n >"$dir/$name.tar.gz"
		archives+=("$name.tar.gz")
	done
	(cd "$dir" && sha256sum "${archives[@]}" >sha256sums.txt)
	echo "wrote ${archives[*]} and sha256sums.txt to $dir" >&2
}

case "${1:-}" in
ldflags) ldflags ;;
stamp)
	case "${2:-}" in
	VERSION | REVISION | BRANCH | BUILD_USER | BUILD_DATE) echo "${!2}" ;;
	*) echo "usage: $0 stamp VERSION|REVISION|BRANCH|BUILD_USER|BUILD_DATE" >&2; exit 2 ;;
	esac
	;;
build)
	[ $# -eq 2 ] || { echo "usage: $0 build OUT" >&2; exit 2; }
	build "$2"
	;;
dist) dist "${2:-dist}" ;;
*)
	echo "usage: $0 ldflags | stamp NAME | build OUT | dist [DIR]" >&2
	exit 2
	;;
esac
