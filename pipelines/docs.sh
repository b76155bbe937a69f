#!/usr/bin/env bash
# docs.sh — rewrite the generated blocks of README.md: the capability matrix
# between <!-- capabilities:begin --> and <!-- capabilities:end -->, from
# pos-extract --capabilities.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${POS_BIN:-$root/bin}
matrix=$("$bin/pos-extract" --capabilities --format markdown)
tmp=$(mktemp)
awk -v m="$matrix" '
  /<!-- capabilities:begin -->/ { print; print m; skip = 1; next }
  /<!-- capabilities:end -->/   { skip = 0 }
  !skip { print }
' "$root/README.md" > "$tmp"
mv "$tmp" "$root/README.md"
echo "docs: README.md capability matrix updated" >&2
