#!/usr/bin/env bash
# install.sh: install ccusage (pinned) from the npm registry into a private
# prefix, once, and print the path of its native binary.
#
#   CCUSAGE=$(pipelines/ccusage/install.sh)
#
# Environment: CCUSAGE_VERSION (default 20.0.24), CCUSAGE_PREFIX (default
# ~/.cache/pos/ccusage-VERSION), CCUSAGE_BIN (print it and install nothing).
# The npm package's launcher (node) starts a native binary shipped in a
# platform package; the binary is what is printed, so timings do not include
# node's start-up. Exits 2 when ccusage cannot be had (no npm, no binary for
# this platform, registry unreachable).
set -euo pipefail

VERSION=${CCUSAGE_VERSION:-20.0.24}
log() { printf 'ccusage: %s\n' "$*" >&2; }

if [[ -n ${CCUSAGE_BIN:-} ]]; then
	echo "$CCUSAGE_BIN"
	exit 0
fi
prefix=${CCUSAGE_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/pos/ccusage-$VERSION}
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) arch=linux-x64 ;;
Linux-aarch64) arch=linux-arm64 ;;
Darwin-arm64) arch=darwin-arm64 ;;
Darwin-x86_64) arch=darwin-x64 ;;
*)
	log "no ccusage native binary for $(uname -s)-$(uname -m)"
	exit 2
	;;
esac
bin=$prefix/node_modules/@ccusage/ccusage-$arch/bin/ccusage
if [[ ! -x $bin ]]; then
	command -v npm >/dev/null || {
		log "npm is not installed (apt-get install npm)"
		exit 2
	}
	log "installing ccusage@$VERSION into $prefix"
	mkdir -p "$prefix"
	npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error "ccusage@$VERSION" >&2 || exit 2
	[[ -f $bin ]] || {
		log "ccusage@$VERSION has no native binary at $bin"
		exit 2
	}
	chmod +x "$bin"
fi
v=$("$bin" --version 2>/dev/null | awk '{print $NF}')
if [[ $v != "$VERSION" ]]; then
	log "$bin is version $v, not $VERSION"
	exit 2
fi
echo "$bin"
