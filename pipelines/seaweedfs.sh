#!/usr/bin/env bash
# Builds the SeaweedFS server the team-lake tests run against (S3 and an
# Iceberg REST catalog on loopback) once per version, into the user's cache,
# and prints the binary's path. The module's replace directive keeps
# `go install …@version` from building it, so it is built from a copy of the
# module. Usage: pipelines/seaweedfs.sh  (prints the path of weed)
set -euo pipefail
version=v0.0.0-20261109003541-7506e5f91cd6  # the same as internal/seaweedtest.Version
dir=${XDG_CACHE_HOME:-$HOME/.cache}/pos/seaweedfs-$version
if [ ! -x "$dir/weed" ]; then
  src=$(go mod download -json "github.com/seaweedfs/seaweedfs@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src" ] || { echo "seaweedfs.sh: could not download github.com/seaweedfs/seaweedfs@$version" >&2; exit 1; }
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
  cp -R "$src/." "$work/"
  chmod -R u+w "$work"
  mkdir -p "$dir"
  (cd "$work" && go build -o "$dir/weed.partial" ./weed)
  mv "$dir/weed.partial" "$dir/weed"
fi
echo "$dir/weed"
