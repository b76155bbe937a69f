#!/usr/bin/env bash
# sync.sh — the main job: read every agent history on this machine into the
# lake (incrementally: only what changed since the last run), then print a
# short report. Embedded defaults: local lake, secrets redacted with a local
# key, local hash embeddings, embedded DuckDB; no network.
#
#   pipelines/sync.sh            sync, then report
#   pipelines/sync.sh --demo     load the bundled testdata histories into a demo lake
#
# Environment: POS_LAKE (lake directory), POS_BIN (where the pos-* binaries
# are; default: bin/ next to this script's parent, then $PATH).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${POS_BIN:-$here/../bin}
[ -x "$bin/pos-extract" ] && PATH="$bin:$PATH"
for b in pos-extract pos-normalize pos-scrub pos-embed pos-load pos-query; do
  command -v "$b" >/dev/null || { echo "sync: $b not found: run 'make build' first" >&2; exit 1; }
done

lake=${POS_LAKE:-${XDG_DATA_HOME:-$HOME/.local/share}/pos/lake}
demo=
since=(--since 30d)
if [ "${1:-}" = "--demo" ]; then
  since=()
  lake=${POS_LAKE:-$(cd "$here/.." && pwd)/tmp/demo-lake}
  demo=1
  echo "sync: demo: loading the bundled synthetic histories (testdata/: Claude Code, Cline, Codex CLI, Gemini CLI, Aider, pushed logs) into $lake" >&2
else
  found=$(pos-extract --list | awk -F'\t' 'NR > 1 && $3 ~ /^[0-9]+$/ && $3 > 0' || true)
  if [ -z "$found" ]; then
    cat >&2 <<MSG
sync: no agent history found on this machine. Looked in:
$(pos-extract --list | awk -F'\t' 'NR > 1 {print "  " $1 "\t" $2}')
sync: hint: point pos-extract at a history folder with --root, or try the bundled demo:
  pipelines/sync.sh --demo      (or: make demo)
MSG
    exit 0
  fi
fi
export POS_LAKE=$lake

# extract reads this machine's histories, or, for the demo, the synthetic
# homes in testdata/: each platform whose default location under such a HOME
# holds files (as pos-extract --list finds them) is read from it, without
# the user's extra roots (POS_ROOTS, which an empty value keeps the
# configuration file from setting). Aider's and push's bundled histories
# are not under a home; they are named by --root.
extract() {
  if [ -z "$demo" ]; then
    pos-extract
    return
  fi
  local t rc=0 c home p
  t=$(cd "$here/../testdata" && pwd) # clean, as the paths --list prints are
  for home in "$t"/*/home; do
    for p in $(HOME=$home POS_ROOTS= pos-extract --list | awk -F'\t' -v h="$home/" 'NR > 1 && $3 ~ /^[0-9]+$/ && $3 > 0 && index($2, h) == 1 {print $1}' | uniq); do
      HOME=$home POS_ROOTS= pos-extract -q -p "$p" || { c=$?; [ "$c" = 3 ] && rc=3 || return "$c"; }
    done
  done
  pos-extract -q -p aider --root "$t/aider/projects" || { c=$?; [ "$c" = 3 ] && rc=3 || return "$c"; }
  pos-extract -q -p push --root "$t/push/push" || { c=$?; [ "$c" = 3 ] && rc=3 || return "$c"; }
  return "$rc"
}

# Exit 3 from a stage means bad input lines were skipped (each reported
# above as path:line: reason); the rest of the run is in the lake.
set +e
extract | pos-normalize | pos-scrub -q | pos-embed | pos-load --require-scrubbed
codes=("${PIPESTATUS[@]}")
set -e
for c in "${codes[@]}"; do
  case $c in
    0|3) ;;
    *) echo "sync: pipeline failed (exit codes: ${codes[*]})" >&2; exit "$c" ;;
  esac
done

echo
case $lake in
  s3://*) echo "Lake: $lake, shared   (published from this machine's local lake; pos-query reads a cache of it)" ;;
  *) echo "Lake: $lake   (duckdb $lake/pos.duckdb, or pos-query sql)" ;;
esac
echo
echo "Recent sessions:"
pos-query sessions --limit 8 --format table
echo
if [ ${#since[@]} -gt 0 ] && [ "$(pos-query stats --by day "${since[@]}" --format csv | wc -l)" -gt 1 ]; then
  echo "Tokens by day and model, last 30 days:"
  pos-query stats --by day,model "${since[@]}" --format table
else
  [ ${#since[@]} -gt 0 ] && echo "No activity in the last 30 days. Tokens by month and model, all time:" || echo "Tokens by day and model:"
  by=day,model
  [ ${#since[@]} -gt 0 ] && by=month,model
  pos-query stats --by "$by" --format table
fi
echo
echo "Next: pos-query recent -n 10 · pos-query search \"TEXT\" · pos-query context --max-tokens 8000 · pos-query --help"
for c in "${codes[@]}"; do
  if [ "$c" = 3 ]; then
    if [ -n "$demo" ]; then
      echo
      echo "(The demo histories hold deliberately broken and half-written lines, to show how pos reports bad input (path:line: reason) and leaves an unfinished last line for the next run.)"
      exit 0
    fi
    exit 3
  fi
done
exit 0
