#!/usr/bin/env bash
# backfill.sh — load the agent histories on this machine into the pos lake:
# every platform (Claude Code, Cline, Cursor, Codex CLI, Gemini CLI, Aider,
# pushed logs) from its default location.
#
#   backfill.sh                   everything, every file from its start (the
#                                 lake keeps one copy of each record)
#   backfill.sh --since 30d       only records newer than that (36h, 2w,
#                                 2026-01-31, RFC 3339)
#   backfill.sh --incremental     only what changed since the last sync: what
#                                 the timer and cron run
#   backfill.sh --platform codex --root DIR ...
#                                 passed to pos-extract (repeatable)
#
# Runs pos-extract | pos-normalize | pos-scrub | pos-embed | pos-load, one
# sync at a time (it waits for a hook's sync to end). Exit 0 when done, 3
# when bad input lines were skipped (each reported above), 1 on failure, 2
# on bad arguments. Environment: see lib.sh (POS_LAKE, POS_BIN …).
set -euo pipefail
umask 077 # the lake is private

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2; }

extract=()
platforms=()
incremental=""
while [ $# -gt 0 ]; do
  case $1 in
    --since) [ $# -ge 2 ] || { echo "backfill: --since needs a value" >&2; exit 2; }
      extract+=(--since "$2"); shift 2 ;;
    --since=*) extract+=(--since "${1#--since=}"); shift ;;
    --incremental) incremental=1; shift ;;
    --platform|--root) [ $# -ge 2 ] || { echo "backfill: $1 needs a value" >&2; exit 2; }
      [ "$1" = --platform ] && platforms+=("$2") || extract+=(--root "$2"); shift 2 ;;
    --lake) [ $# -ge 2 ] || { echo "backfill: --lake needs a value" >&2; exit 2; }
      export POS_LAKE=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "backfill: unknown argument $1" >&2; usage; exit 2 ;;
  esac
done
args=("${extract[@]}")
[ -z "$incremental" ] && args+=(--full) # every file from its start; the watermarks still move
if [ ${#platforms[@]} -eq 0 ]; then
  args+=(--platform all)
else
  for p in "${platforms[@]}"; do args+=(--platform "$p"); done
fi

if ! pos_setup; then
  echo "backfill: $pos_error" >&2
  exit 1
fi
[ -n "$pos_warning" ] && echo "backfill: $pos_warning" >&2
if ! pos_lock; then
  echo "backfill: another sync held the lock of $POS_LAKE for ${POS_SYNC_WAIT:-900}s" >&2
  exit 1
fi
what="backfill"
[ -n "$incremental" ] && what="incremental sync"
echo "backfill: $what into $POS_LAKE: pos-extract ${args[*]} | $(pos_describe)" >&2
if ! pos_pipeline "${args[@]}"; then
  echo "backfill: failed (exit codes ${pos_codes[*]})" >&2
  exit 1
fi
for c in "${pos_codes[@]}"; do
  [ "$c" = 3 ] && exit 3
done
exit 0
